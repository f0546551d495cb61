"""Ingest's per-file work spread over forked worker processes (issue 15: index in less wall time).

Reading, masking, chunking, embedding and analysing a new blob for the keyword index depend on
nothing but the blob, and tree-sitter holds the GIL, so threads cannot share them out: forked
processes do. The ingesting process keeps everything else, above all every store write, and
takes the workers' results in the order it would have made them itself, so chunk ids, row ids,
heap slots and every stored byte are those of the sequential path (tests pin it).

How it stays safe:

* Workers are forked before any thread exists in the process (the API starts its co-change
  mining thread only after :func:`fork_workers`; with another thread alive — an MCP server, say
  — the ingest runs sequentially): a fork copies locks another thread may hold.
* A worker gets its share of the jobs and the embedder through the fork (nothing pickled on the
  way in), opens its own ``git cat-file``, never touches the parent's store connection and
  leaves with ``os._exit``, so no inherited object is ever finalised twice.
* Results come back through one pipe per worker, read as they arrive (a worker never waits for
  the parent for long). A worker that fails sends its error; one that dies (killed, out of
  memory) closes its pipe: either way the ingest raises before publishing, and every worker is
  killed and reaped, so nothing hangs and no snapshot changes.

Small ingests (a commit's few files) stay in one process: a worker's fixed costs (the fork, its
own ``git cat-file``, first-call costs in the embedder) are worth paying only for enough new
bytes (:data:`MIN_PARALLEL_BYTES`, measured in bench/README.md).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import RagitError

if TYPE_CHECKING:  # pragma: no cover
    from ..embed.base import Embedder
    from ..gitsnap.git import Git
    from ..store.records import BlobRecord, NewChunk
    from .blobwork import BlobChunker

WORKERS_ENV = "RAGIT_INGEST_WORKERS"
# ``ingest.workers = -1`` (the default): one worker per core, at most this many (the parent's
# store writes and the keyword index are not shared out, so more workers gain less and less).
MAX_AUTO_WORKERS = 4
# New blob bytes an ingest needs before it forks workers, and per worker it forks. Measured on two
# cores (bench/README.md, session 14): 600-900 KB of code ingests 5-18 % faster with two workers,
# 350-450 KB no faster (flask 16 % slower), for 1-20 % more CPU.
MIN_PARALLEL_BYTES = 512 << 10
MIN_WORKER_BYTES = 256 << 10
# Characters of chunk text whose keyword fields the workers analyse (the parent keeps the fields,
# about as large as the text, until it publishes: ~100 MB at most; sympy's 42,897 chunks hold
# 31M characters); the rest are analysed as they are written.
ANALYSE_CHARS = 64 << 20
_HEADER = struct.Struct("<Q")
_READ = 1 << 20
_PIPE_SIZE = 1 << 20  # F_SETPIPE_SZ: a worker runs further ahead before it waits (Linux)
# Results held for later jobs before the parent reads only from the worker it waits for (so one
# worker far ahead of another cannot fill the parent's memory).
MAX_AHEAD = 2048

Emit = Callable[[list[tuple[int, Any]]], None]
Work = Callable[[list[tuple[int, Any]], Emit], None]


def planned_workers(config) -> int:
    """Worker processes an ingest may fork (0: it runs in this process).

    ``RAGIT_INGEST_WORKERS``, else ``ingest.workers``: ``0`` or ``1`` runs in one process, ``-1``
    (default) one worker per core up to :data:`MAX_AUTO_WORKERS` on a machine with at least two;
    a set number is taken as it is. Linux only (fork with the model mapped once).
    """
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise RagitError("CONFIG_INVALID", f"{WORKERS_ENV} must be an integer, got {raw!r}",
                             {"path": WORKERS_ENV, "reason": "expected integer"}, f"unset {WORKERS_ENV}") from None
    else:
        value = int(config["ingest"].get("workers", -1))
    if value < 0:
        cores = os.cpu_count() or 1
        value = min(cores, MAX_AUTO_WORKERS) if cores >= 2 else 0
    if value < 2 or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 0
    return value


def shares(jobs: Sequence[tuple[int, Any]], sizes: Sequence[int], count: int) -> list[list[tuple[int, Any]]]:
    """``jobs`` dealt to ``count`` workers in order, each to the one with the fewest bytes so far:
    the shares interleave, so results arrive in about the order the parent takes them."""
    parts: list[list[tuple[int, Any]]] = [[] for _ in range(count)]
    loads = [0] * count
    for job, size in zip(jobs, sizes):
        k = loads.index(min(loads))
        parts[k].append(job)
        loads[k] += size
    return parts


class Workers:
    """Forked processes that each run ``work(share, emit)``; :meth:`next` gives the results in
    job order (job ``i`` of the shares is the ``i``-th result, through ``decode`` when given),
    telling ``progress(done, total)`` of each; :meth:`finish` after the last, :meth:`close`
    always (it kills and reaps every worker still running)."""

    def __init__(self, parts: list[list[tuple[int, Any]]], work: Work,
                 progress: Callable[[int, int], None] | None = None,
                 decode: Callable[[Any], Any] | None = None) -> None:
        self._procs: list[tuple[int, int]] = []  # (pid, read end) of the workers not yet reaped
        self._fds: list[int] = []  # each worker's read end, by worker
        self._buffers: dict[int, bytearray] = {}
        self._done: set[int] = set()  # read ends whose worker sent its last result
        self._ready: dict[int, Any] = {}
        self._next = 0
        self._owner = {job: k for k, part in enumerate(parts) for job, _ in part}  # job -> its worker
        self._progress = progress
        self._decode = decode
        self.cpu: list[float] = []  # each finished worker's own CPU seconds (benchmarks read them)
        try:
            for part in parts:
                r, w = os.pipe()
                _grow_pipe(w)
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the child (covered through its results)
                    _child(w, [fd for _, fd in self._procs] + [r], work, part)
                os.close(w)
                self._procs.append((pid, r))
                self._fds.append(r)
                self._buffers[r] = bytearray()
        except BaseException:
            self.close()
            raise

    def next(self) -> Any:
        """The next result in job order (waits for it; raises if a worker failed)."""
        while self._next not in self._ready:
            self._pump()
        self._next += 1
        if self._progress is not None:
            self._progress(self._next, len(self._owner))
        result = self._ready.pop(self._next - 1)
        return result if self._decode is None else self._decode(result)

    def finish(self) -> None:
        """After the last result: wait for every worker's end (raising if one failed), reap them."""
        while any(fd not in self._done for _, fd in self._procs):
            self._pump()
        self.close()

    def _pump(self) -> None:
        """Read whatever the workers have written; raise when one failed or died."""
        waiting = [fd for _, fd in self._procs if fd not in self._done]
        if len(self._ready) > MAX_AHEAD:  # the others wait (their pipes fill) for the one that is behind
            waiting = [fd for fd in waiting if fd == self._fd_of(self._next)]
        if not waiting:
            raise _failed(f"no ingest worker holds result {self._next}")
        poller = select.poll()
        for fd in waiting:
            poller.register(fd, select.POLLIN)
        for fd, _ in poller.poll():
            data = os.read(fd, _READ)
            if not data:
                raise _failed(self._ended(fd))
            buffer = self._buffers[fd]
            buffer += data
            while len(buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(buffer)
                if len(buffer) < _HEADER.size + size:
                    break
                kind, payload = pickle.loads(memoryview(buffer)[_HEADER.size:_HEADER.size + size])
                del buffer[:_HEADER.size + size]
                if kind == "results":
                    self._ready.update(payload)
                elif kind == "end":
                    self._done.add(fd)
                    self.cpu.append(payload)
                else:
                    raise _raised(payload)

    def _fd_of(self, job: int) -> int | None:
        """The read end of the worker that makes result ``job`` (None once it is reaped)."""
        k = self._owner.get(job)
        return self._fds[k] if k is not None else None

    def _ended(self, fd: int) -> str:
        """How the worker reading into ``fd`` ended (its pipe closed early)."""
        pid = next(p for p, f in self._procs if f == fd)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return f"ingest worker {pid} exited"
        self._procs = [(p, f) for p, f in self._procs if p != pid]
        os.close(fd)
        if os.WIFSIGNALED(status):
            return f"ingest worker {pid} was killed by signal {os.WTERMSIG(status)}"
        return f"ingest worker {pid} exited with status {os.waitstatus_to_exitcode(status)}"

    def close(self) -> None:
        """Kill the workers still running (none after a complete run) and reap them all."""
        for pid, fd in self._procs:
            if fd not in self._done:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            os.close(fd)
        self._procs = []


def _grow_pipe(fd: int) -> None:
    import fcntl

    if hasattr(fcntl, "F_SETPIPE_SZ"):
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
        except OSError:  # above /proc/sys/fs/pipe-max-size: the default size still works
            pass


def _child(w: int, inherited: list[int], work: Work, part: list[tuple[int, Any]]) -> None:  # pragma: no cover
    """A worker's whole life: its share's results, then "end" (or its error), then ``_exit``."""
    code = 70
    try:
        for fd in inherited:  # other workers' pipes: their end of file must not wait for this one
            os.close(fd)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C reaches the parent, which kills the workers
        os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one thread per worker; no fork warning
        work(part, lambda results: _send(w, "results", results))
        _send(w, "end", time.process_time())
        code = 0
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        try:
            _send(w, "error", _described(exc))
        except BaseException:  # noqa: BLE001 - the parent is gone or the pipe is broken
            pass
    finally:
        os._exit(code)


def _send(fd: int, kind: str, payload: Any) -> None:
    data = pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL)
    os.write(fd, _HEADER.pack(len(data)))  # fewer bytes than PIPE_BUF: written whole
    view = memoryview(data)  # the pickle itself, not a copy joined to its header
    while view:
        view = view[os.write(fd, view):]


def _described(exc: BaseException) -> tuple[str, Any]:
    """A worker's exception as the parent can raise it again."""
    if isinstance(exc, RagitError):
        return "ragit", (exc.code, exc.message, exc.details, exc.recovery)
    try:
        data = pickle.dumps(exc)
        pickle.loads(data)
        return "pickled", data
    except Exception:  # noqa: BLE001 - an exception that does not survive pickling: its text
        import traceback

        return "text", "".join(traceback.format_exception_only(type(exc), exc)).strip()


def _raised(described: tuple[str, Any]) -> BaseException:
    kind, value = described
    if kind == "ragit":
        return RagitError(*value)
    if kind == "pickled":
        return pickle.loads(value)
    return _failed(f"an ingest worker failed: {value}")


def _failed(reason: str) -> RagitError:
    return RagitError("INTERNAL_ERROR", f"{reason}; the ingest published nothing",
                      {"reason": reason}, f"{WORKERS_ENV}=1 ragit ingest --all")


def preload(*, code: bool, keyword: bool, pieces: bool = False) -> None:
    """Import before forking what every worker would otherwise import for itself (numpy, the
    language table and tree-sitter for code, the keyword analysis and its stemmer, the static
    models' piece tokeniser: ~8 ms a worker): once, shared by the fork."""
    import importlib

    names = ["numpy"]
    if code:
        names += ["ragit.ingest.code", "tree_sitter"]
    if keyword:
        names += ["ragit.store.bm25", "ragit.lexical", "Stemmer"]
    if pieces:
        names.append("ragit.embed.pieces")
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # no tree-sitter: code is chunked in line windows (ragit.ingest.code)
            pass


def can_fork() -> bool:
    """Whether forking now is safe: no other Python thread holds locks the child would copy."""
    return threading.active_count() == 1


def batch_independent(embedder: "Embedder") -> bool:
    """Whether ``embedder`` gives a text the same vector in any batch (so a worker may embed it):
    the bundled static models and the placeholder say so; an unknown embedder is not trusted."""
    from ..embed.placeholder import PlaceholderEmbedder
    from ..embed.static import StaticEmbedder

    return type(embedder) in (StaticEmbedder, PlaceholderEmbedder)


class BlobWire:
    """How a worker's blob result ``(record, chunk rows, vectors, keyword fields)`` travels: as
    plain tuples, the record's chunks left out. Pickle reduces a named tuple or a dataclass
    through Python calls per object both ways (sympy: ~0.2 s of the workers' and the parent's
    CPU for 86k chunk tuples); a plain tuple is pickled in C, and the parent rebuilds the rows
    and the record's chunks (the same values: each stored chunk is a row's columns) in C-level
    passes. ``decode(encode(...))`` equals the result it was given."""

    def __init__(self) -> None:
        from dataclasses import fields
        from functools import partial
        from operator import attrgetter, itemgetter

        from ..store.records import BlobRecord, NewChunk, StoredChunk

        # every field but ``chunks``, which the record's constructor takes last, by name (were it
        # not the last field, the positional fields before it would collide with it: a TypeError)
        self._head = attrgetter(*(f.name for f in fields(BlobRecord) if f.name != "chunks"))
        self._record = BlobRecord
        self._row = partial(tuple.__new__, NewChunk)
        self._stored = partial(tuple.__new__, StoredChunk)
        self._stored_of = itemgetter(*(NewChunk._fields.index(name) for name in StoredChunk._fields))

    def encode(self, record: "BlobRecord", chunks: "list[NewChunk]", vectors: bytes | None,
               fields: list | None) -> tuple:
        """The worker's side: ``chunks`` are the rows of every chunk of ``record``, in order."""
        return self._head(record), list(map(tuple, chunks)), vectors, fields

    def decode(self, wire: tuple | None) -> tuple | None:
        """The parent's side (None: the blob is absent from the clone)."""
        if wire is None:
            return None
        head, rows, vectors, fields = wire
        stored = tuple(map(self._stored, map(self._stored_of, rows)))
        return self._record(*head, chunks=stored), list(map(self._row, rows)), vectors, fields


def chunk_share(git: "Git", chunker: "BlobChunker", embedder: "Embedder", supported: Iterable[str],
                analyse: int, batch: int) -> Work:
    """A worker's work on its share of new blobs ``(job, (candidate, profile))``: each blob's
    record and chunk rows, and when the blob is admitted at the candidate's path the vectors of
    its chunks (embedded ``batch`` texts at a time) and their keyword fields at that path, for
    the first ``analyse`` characters of text (the parent holds them until it publishes), as
    :class:`BlobWire` encodes them. A blob absent from the clone gives None."""
    supported = frozenset(supported)

    def work(part: list[tuple[int, Any]], emit: Emit) -> None:
        from itertools import repeat

        import numpy as np

        from ..gitsnap.blobs import BlobReader
        from ..store.bm25 import index_fields
        from .blobwork import doc_type, stream_present
        from .chunks import input_text, text_words

        wire = BlobWire().encode
        held: list[tuple[int, Any, Any, list, bool]] = []  # (job, candidate, record, chunks, admitted) unsent
        texts: list[str] = []
        budget = analyse
        # the embedder's word split of each text, when it makes one, is the keyword analysis's too
        embed_words = getattr(embedder, "embed_with_words", None)

        def flush() -> None:
            nonlocal budget
            words: list = []
            if not texts:
                vectors = b""
            elif embed_words is not None:
                found, words = embed_words(texts)
                vectors = np.ascontiguousarray(found, dtype=np.float32).tobytes()
            else:
                vectors = np.ascontiguousarray(embedder.embed(texts), dtype=np.float32).tobytes()
            row = len(vectors) // len(texts) if texts else 0
            at = 0
            out = []
            for job, c, record, chunks, admitted in held:
                if record is None:
                    out.append((job, None))
                elif admitted:
                    end = at + len(chunks)
                    fields = None
                    if budget > 0:
                        fields = [index_fields(n.text, n.title, c.path,
                                               None if w is None else text_words(n.title, w))
                                  for n, w in zip(chunks, words[at:end] if words else repeat(None))]
                        budget -= sum(len(n.text) for n in chunks)
                    out.append((job, wire(record, chunks, vectors[at * row:end * row], fields)))
                    at = end
                else:
                    out.append((job, wire(record, chunks, None, None)))
            emit(out)
            held.clear()
            texts.clear()

        with BlobReader(git) as reader:
            stream = stream_present(reader, [c.blob_id for _, (c, _) in part], None)
            try:
                for (job, (c, profile)), (_, data) in zip(part, stream):
                    if data is None:
                        held.append((job, c, None, [], False))
                        continue
                    record, chunks = chunker(c, profile, data, True)
                    admitted = bool(chunks) and doc_type(c.path, c.kind, record, supported) is not None
                    held.append((job, c, record, chunks, admitted))
                    if admitted:
                        texts.extend(input_text(n.title, n.text) for n in chunks)
                    if len(texts) >= batch:
                        flush()
                flush()
            finally:
                stream.close()

    return work
