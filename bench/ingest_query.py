"""Ingest and query cost at realistic sizes (issue 2, item 9).

Builds git repositories in a temporary directory and measures, against the targets of the
performance stance (DESIGN.md):

1. a 1,000-document typed Markdown corpus (8 doc types × 3 sections × 150 words, ≈ 6,000
   chunks): `ragit ingest --all` wall time and peak RSS as a subprocess; in-process
   `Repo.ingest(all=True)` split into time inside `embedder.embed` and the work beyond it;
   manifest bytes for the commit; store size;
2. cold CLI latency on that corpus: `ragit query "<q>" --format json` and
   `ragit context pack "<goal>" --format json` as fresh subprocesses (median of 7 after one
   discarded warm-up run);
3. warm API latency (`Repo.query`, `Repo.pack` in one process, p50/p95 over 50 varied
   questions) at ≈ 6,000 chunks and at ≈ 100,000 chunks (a second, larger corpus);
4. a 10,000-file repository (≈ 8,000 small Python/TypeScript files + ≈ 2,000 Markdown docs):
   full ingest, then one-file commits re-ingested with `--since <previous sha>` and `--all`;
5. a Markdown table (metric | value | target) on stdout and a JSON file (default
   bench/results.json) with machine info, ragit's git sha, the date and every metric with
   its unit.

    python bench/ingest_query.py [--quick] [--skip-100k] [--embedder minilm-static|placeholder]
                                 [--repo PATH] [--out PATH] [--profile DIR] [--keep]

Corpora are generated from a fixed seed, so every run indexes byte-identical repositories.
The word list is the alphabetic whole-word part (5-14 letters, frequency order) of the
whole words of the bundled MiniLM tokenizer vocabulary, sampled Zipf-like; with
words of 5+ letters a 150-word section is just over the Markdown chunker's 1,000-character
window, so a 3-section doc gives 6 chunks, as in the reference (1,000 docs ≈ 6,000 chunks).
A small built-in list is used when that vocabulary cannot be read.

Measured children run with bytecode caching on (PYTHONPYCACHEPREFIX inside the work dir),
as an installed ragit would; one extra row shows the cold query with PYTHONDONTWRITEBYTECODE=1.
A warm-up (a full ingest and a query of a two-file repository, as a child and in-process)
fills that cache and imports the write path first, so no measured figure includes compiling
or first-importing a module (numpy, tokenizers, the store writer).
Wall times depend on machine load: every CLI row also shows the child's CPU time, and the
JSON records the load average.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import platform
import pstats
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
SEED = 20240917

DOC_TYPES = ("adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd")
# Directory names that the path rule of knowledge §8.3 maps to each type.
TYPE_DIRS = {
    "adr": "decisions", "prd": "product-requirements", "srs": "requirements", "spec": "specs",
    "plan": "roadmap", "ddd": "domain-model", "glossary": "glossary", "pbd": "phase-bindings",
}

# Fresh `ragit ingest --all` processes on the 1,000-doc corpus (each on an empty index): the
# row is their median by CPU time, so one run disturbed by the machine's load does not set it.
INGEST_RUNS = 3

TARGETS = {
    "cold_cli_query_6k_s": ("<=", 0.25, "s"),
    "cold_cli_pack_6k_s": ("<=", 0.30, "s"),
    "warm_api_query_p50_100k_ms": ("<=", 20.0, "ms"),
    "warm_api_pack_p50_100k_ms": ("<=", 30.0, "ms"),
    "ingest_1k_beyond_embedder_s": ("<=", 1.2, "s"),
    "manifest_1k_mb": ("<=", 0.3, "MB"),
    "reingest_since_one_file_ratio": ("<=", 0.02, "ratio"),
    "reingest_since_warm_one_file_ratio": ("<=", 0.02, "ratio"),
    "reingest_all_one_file_ratio": ("<=", 0.02, "ratio"),
}

FALLBACK_WORDS = """
the of and to in is for that with as on by this be are from or it an at which not can have
all will one has more when there their also new used each other time data file query index
store chunk vector commit branch snapshot manifest document section token budget context
agent memory session transcript retrieval ranking score citation evidence provenance policy
config schema table column record field value type error message request response client
server service handler router cache queue worker thread process lock mutex latency throughput
memory buffer stream parser lexer compiler module package import export build deploy release
version migration rollback backup restore replica cluster node shard partition leader follower
consensus quorum timeout retry backoff circuit breaker gateway proxy balancer endpoint resource
identity access token secret key certificate signature hash digest checksum encryption audit
log metric trace span alert dashboard incident review decision requirement specification plan
domain aggregate entity repository factory event command projection saga boundary glossary
term phase binding milestone roadmap scope risk assumption constraint stakeholder customer user
feature story acceptance criteria test fixture mock integration unit property regression bench
""".split()  # noqa: SIM905 - a word list reads better as text


# --------------------------------------------------------------------------- utilities


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def dir_bytes(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        if p.is_file():
            total += p.stat().st_size
    return total


GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str, capture: bool = True) -> str:
    env = dict(os.environ, **GIT_ENV)
    env["HOME"] = str(repo.parent)  # ignore the user's global git config
    out = subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                         stdout=subprocess.PIPE if capture else subprocess.DEVNULL, text=True)
    return out.stdout.strip() if capture else ""


def init_repo(repo: Path) -> None:
    """A new repository with the ``.gitignore`` lines ``ragit init`` writes, as a user's would
    have: the store, caches and sessions are never committed (manifests are)."""
    from ragit.bootstrap.gitignore import updated_gitignore

    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text(updated_gitignore(None) or "", encoding="utf-8")


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD")


# --------------------------------------------------------------------------- vocabulary


def load_vocabulary(size: int = 4000) -> tuple[list[str], str]:
    """Up to ``size`` real words, most frequent first, and a description of the source."""
    try:
        from ragit.embed import MINILM_DIR

        vocab = json.loads((MINILM_DIR / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
        words: list[str] = []
        pattern = re.compile(r"[a-z]{5,14}")  # ≥ 5 letters: 150 words > 1,000 chars, as in the reference
        for tok, _ in sorted(vocab.items(), key=lambda kv: kv[1]):  # WordPiece ids: roughly by frequency
            if pattern.fullmatch(tok):
                words.append(tok)
                if len(words) >= size:
                    break
        if len(words) >= 1000:
            return words, f"bundled MiniLM tokenizer vocabulary, {len(words)} whole words of 5-14 letters"
    except Exception as exc:  # noqa: BLE001 - fall back to the built-in list
        log(f"tokenizer vocabulary unavailable ({exc}); using the built-in word list")
    words = list(dict.fromkeys(FALLBACK_WORDS))
    return words, f"built-in list, {len(words)} words"


class WordSampler:
    """Zipf-like (weight 1/(rank+20)) sampling from the vocabulary with a seeded RNG."""

    def __init__(self, words: list[str], rng: random.Random):
        self.words = words
        self.rng = rng
        weights = [1.0 / (i + 20) for i in range(len(words))]
        self.cum = []
        acc = 0.0
        for w in weights:
            acc += w
            self.cum.append(acc)

    def sample(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)

    def mid(self) -> str:
        """A mid-frequency word (rank 100..1500), the kind a question is made of."""
        hi = min(1500, len(self.words))
        return self.words[self.rng.randrange(min(100, hi - 1), hi)]


def paragraph(words: list[str], per_line: int = 14) -> str:
    lines = []
    for i in range(0, len(words), per_line):
        line = " ".join(words[i : i + per_line])
        lines.append(line[0].upper() + line[1:] + ("." if i + per_line >= len(words) else ""))
    return "\n".join(lines)


# --------------------------------------------------------------------------- corpora


def write_typed_docs(repo: Path, n_docs: int, sampler: WordSampler, *, sections: int = 3,
                     words_per_section: int = 150, prefix: str = "docs") -> list[Path]:
    """``n_docs`` typed Markdown docs; the type comes from front matter (even) or directory (odd)."""
    written = []
    for i in range(n_docs):
        doc_type = DOC_TYPES[i % len(DOC_TYPES)]
        if i % 2 == 0:
            rel = Path(prefix) / "notes" / f"{i // 1000:03d}" / f"{doc_type}-{i:06d}.md"
            head = f"---\ntype: {doc_type}\nstatus: accepted\nowner: team-{i % 17}\n---\n"
        else:
            rel = Path(prefix) / TYPE_DIRS[doc_type] / f"{i // 1000:03d}" / f"{doc_type}-{i:06d}.md"
            head = ""
        title = " ".join(sampler.sample(4))
        parts = [head + f"# {doc_type.upper()} {i}: {title}\n"]
        for s in range(sections):
            heading = " ".join(sampler.sample(3)).capitalize()
            parts.append(f"## {s + 1}. {heading}\n\n{paragraph(sampler.sample(words_per_section))}\n")
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts), encoding="utf-8")
        written.append(path)
    return written


def _ident(sampler: WordSampler, n: int = 2) -> str:
    return "_".join(sampler.sample(n))


def _camel(sampler: WordSampler, n: int = 2) -> str:
    return "".join(w.capitalize() for w in sampler.sample(n))


def python_file(sampler: WordSampler, rng: random.Random) -> str:
    out = [f'"""{" ".join(sampler.sample(10)).capitalize()}."""', "", "from __future__ import annotations", "",
           "import os", "from dataclasses import dataclass", ""]
    for _ in range(rng.randint(1, 3)):
        name = _ident(sampler)
        args = ", ".join(_ident(sampler, 1) + "_" + str(j) for j in range(rng.randint(1, 3)))
        out += ["", f"def {name}({args}):", f'    """{" ".join(sampler.sample(8)).capitalize()}."""']
        for j in range(rng.randint(2, 6)):
            out.append(f"    {_ident(sampler, 1)}_{j} = {rng.randint(0, 999)}  # {' '.join(sampler.sample(5))}")
        out.append(f"    return {_ident(sampler, 1)}_0")
    if rng.random() < 0.6:
        cls = _camel(sampler)
        out += ["", "", "@dataclass", f"class {cls}:", f'    """{" ".join(sampler.sample(9)).capitalize()}."""', "",
                f"    {_ident(sampler, 1)}: int = 0", f"    {_ident(sampler, 1)}: str = ''"]
        for _ in range(rng.randint(1, 3)):
            out += ["", f"    def {_ident(sampler)}(self, value):",
                    f"        # {' '.join(sampler.sample(7))}",
                    f"        return value * {rng.randint(2, 9)}"]
    return "\n".join(out) + "\n"


def ts_file(sampler: WordSampler, rng: random.Random) -> str:
    out = [f"// {' '.join(sampler.sample(10))}", f"import {{ {_camel(sampler)} }} from './{_ident(sampler)}';", ""]
    for _ in range(rng.randint(1, 3)):
        name = _camel(sampler, 2)
        name = name[0].lower() + name[1:]
        out += [f"/** {' '.join(sampler.sample(8))} */",
                f"export function {name}(input: number, label: string): number {{"]
        for j in range(rng.randint(2, 6)):
            out.append(f"  const {_camel(sampler, 1).lower()}{j} = input + {rng.randint(0, 999)}; // {' '.join(sampler.sample(4))}")
        out += ["  return input;", "}", ""]
    if rng.random() < 0.6:
        cls = _camel(sampler)
        out += [f"export class {cls} {{", f"  private {_camel(sampler, 1).lower()} = 0;"]
        for _ in range(rng.randint(1, 3)):
            m = _camel(sampler, 2)
            out += [f"  {m[0].lower() + m[1:]}(value: number): number {{", f"    // {' '.join(sampler.sample(6))}",
                    f"    return value * {rng.randint(2, 9)};", "  }"]
        out += ["}", ""]
    return "\n".join(out)


def write_code_repo(repo: Path, n_code: int, n_docs: int, sampler: WordSampler, rng: random.Random) -> list[Path]:
    """``n_code`` small Python/TypeScript files in packages of 100 plus ``n_docs`` typed docs."""
    code_paths = []
    for i in range(n_code):
        pkg = f"pkg{i // 100:03d}"
        if i % 2 == 0:
            path = repo / "src" / pkg / f"mod_{i:05d}.py"
            text = python_file(sampler, rng)
        else:
            path = repo / "web" / pkg / f"mod{i:05d}.ts"
            text = ts_file(sampler, rng)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        code_paths.append(path)
    write_typed_docs(repo, n_docs, sampler, sections=2, words_per_section=80)
    return code_paths


# --------------------------------------------------------------------------- CLI runs


@dataclass
class Run:
    wall_s: float
    cpu_s: float  # user + system time of the child (and the children it waited for)
    max_rss_mb: float
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)


class CommandFailed(RuntimeError):
    pass


def ragit_bin() -> str:
    candidate = Path(sys.executable).parent / "ragit"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("ragit")
    if not found:
        raise SystemExit("ragit executable not found next to this interpreter or on PATH")
    return found


# Environment of every measured child. ``main`` enables bytecode caching (cache_bytecode) the
# way an installed ragit has it: with PYTHONDONTWRITEBYTECODE=1 and an editable install every CLI
# run compiles ragit's modules.
CHILD_ENV: dict[str, str] = dict(os.environ)


def cache_bytecode(directory: Path) -> None:
    """Let every measured child cache its bytecode in ``directory`` (a work dir's, so nothing is
    written next to the sources), whatever PYTHONDONTWRITEBYTECODE the caller's shell sets."""
    CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(directory)


def child_env(*, bytecode: bool = True) -> dict[str, str]:
    env = dict(CHILD_ENV)
    if not bytecode:
        env.pop("PYTHONPYCACHEPREFIX", None)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


# A small launcher between the benchmark and each measured command. A child's peak RSS starts
# from the memory image it was forked from (Linux carries the pre-exec high-water mark into
# ru_maxrss), so forking straight from this process, which holds corpora and snapshot matrices,
# would report this process's size. The launcher (≈ 10 MB) spawns the command, times it and
# reports the command's own rusage.
LAUNCHER = """
import json, os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.posix_spawn(argv[0], argv, os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(report, "w") as fh:
    json.dump({"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "max_rss_kb": ru.ru_maxrss,
               "returncode": os.waitstatus_to_exitcode(status)}, fh)
"""


def run_cmd(argv: list[str], cwd: Path, *, check: bool = True, env: dict[str, str] | None = None,
            sampler: Any = None) -> Run:
    """Run ``argv`` through the launcher: wall time, CPU time and peak RSS of that command.
    ``sampler`` (a ``proctree.TreeSampler``) watches the launcher's tree while it runs."""
    exe = argv[0] if os.path.isabs(argv[0]) else (shutil.which(argv[0]) or argv[0])
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".json") as report:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, report.name, exe, *argv[1:]], cwd=cwd, stdout=out,
                                stderr=err, stdin=subprocess.DEVNULL, env=CHILD_ENV if env is None else env)
        if sampler is not None:
            sampler.start(proc.pid)
        try:
            code = proc.wait()
        finally:
            if sampler is not None:
                sampler.stop()
        if code:
            raise subprocess.CalledProcessError(code, proc.args)
        info = json.loads(Path(report.name).read_text(encoding="utf-8"))
        out.seek(0)
        err.seek(0)
        run = Run(info["wall_s"], info["cpu_s"], info["max_rss_kb"] / 1024.0, info["returncode"],
                  out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))
    if check and run.returncode != 0:
        detail = run.stdout.strip()[-2000:] or run.stderr.strip()[-2000:]
        raise CommandFailed(f"{' '.join(argv[1:4])}... exited {run.returncode}: {detail}")
    return run


def debug_traceback(argv: list[str], cwd: Path) -> str:
    env = dict(CHILD_ENV, RAGIT_DEBUG="1")
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return proc.stderr.strip()[-4000:]


def ragit(cwd: Path, *args: str, check: bool = True) -> Run:
    return run_cmd([ragit_bin(), *args], cwd, check=check)


def settle_index(repo: Path) -> None:
    """Refresh the index as a developer's own git long since has (any ``git status``, ``add`` or
    ``commit`` does). A corpus written and committed within one second leaves every entry
    "racily clean", and a read, which never writes the index (GIT_OPTIONAL_LOCKS=0), would make
    git hash every file again on each query: 13.7 ms instead of 3.5 ms of ``git status`` at
    1,000 files. The index must be written in a later second than the files, which were all
    written before the index that holds them (``git add``), so a second after that index will do."""
    written = (repo / ".git" / "index").stat().st_mtime
    time.sleep(max(0.0, written + 1.05 - time.time()))
    git(repo, "update-index", "-q", "--refresh", capture=False)


def cold_cli(cwd: Path, args: list[str], runs: int, *, bytecode: bool = True) -> dict[str, Any]:
    """One discarded warm-up, then ``runs`` fresh subprocesses; wall-time statistics. The index
    is settled first (:func:`settle_index`), as a user's repository is."""
    settle_index(cwd)
    argv = [ragit_bin(), *args]
    env = child_env(bytecode=bytecode)
    first = run_cmd(argv, cwd, check=False, env=env)
    if first.returncode != 0:
        raise CommandFailed(f"ragit {' '.join(args[:1])} failed:\n{debug_traceback(argv, cwd)}")
    walls, cpus, rss = [], [], []
    for _ in range(runs):
        r = run_cmd(argv, cwd, env=env)
        walls.append(r.wall_s)
        cpus.append(r.cpu_s)
        rss.append(r.max_rss_mb)
    hits = first.json().get("data", {}).get("hits", [])
    return {"median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
            "median_cpu_s": statistics.median(cpus),
            "runs": runs, "peak_rss_mb": max(rss), "hits": len(hits)}


# --------------------------------------------------------------------------- in-process


def profile_to_text(prof: cProfile.Profile, limit: int = 25) -> str:
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(limit)
    buf.write("\n--- by own time ---\n")
    stats.sort_stats("tottime").print_stats(limit)
    return buf.getvalue()


def save_profile(prof: cProfile.Profile | None, profile_dir: Path | None, name: str) -> None:
    if prof is None or profile_dir is None:
        return
    profile_dir.mkdir(parents=True, exist_ok=True)
    prof.dump_stats(str(profile_dir / f"{name}.prof"))
    (profile_dir / f"{name}.txt").write_text(profile_to_text(prof), encoding="utf-8")


def api_ingest(repo_path: Path, profile_dir: Path | None = None, name: str = "") -> dict[str, Any]:
    """``Repo.open(path).ingest(all=True)`` on an empty index, with the embedder's ``embed`` timed.

    With ``profile_dir`` the ingest runs under cProfile (slower; the caller keeps the figures
    of an unprofiled run for the table).
    """
    from ragit.api import Repo

    clear_index(repo_path)
    t0 = time.perf_counter()
    repo = Repo.open(repo_path)
    embedder = repo.embedder  # load (or reuse) the model before the clock starts
    load_s = time.perf_counter() - t0
    repo.ingest(all=True, dry_run=True)  # imports and first-call costs stay out of the figures
    inner = {"s": 0.0, "cpu_s": 0.0, "calls": 0, "texts": 0}
    original = embedder.embed

    def timed_embed(texts):
        c, t = time.process_time(), time.perf_counter()
        try:
            return original(texts)
        finally:
            inner["s"] += time.perf_counter() - t
            inner["cpu_s"] += time.process_time() - c
            inner["calls"] += 1
            inner["texts"] += len(texts)

    embedder.embed = timed_embed  # type: ignore[method-assign]
    prof = cProfile.Profile() if profile_dir else None
    try:
        c0, t0 = time.process_time(), time.perf_counter()
        if prof:
            prof.enable()
        result = repo.ingest(all=True)
        if prof:
            prof.disable()
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        del embedder.embed  # restore the class method
    save_profile(prof, profile_dir, name)
    return {"embedder": embedder.id, "load_embedder_s": load_s, "total_s": total, "cpu_s": cpu, "embed_s": inner["s"],
            "embed_cpu_s": inner["cpu_s"], "beyond_embedder_s": total - inner["s"],
            "beyond_embedder_cpu_s": cpu - inner["cpu_s"], "embed_calls": inner["calls"], "embedded_texts": inner["texts"],
            "processed": result.processed, "embedded_chunks": result.embedded_chunks, "profiled": prof is not None}


def warm_api(repo_path: Path, questions: list[str], profile_dir: Path | None, name: str) -> dict[str, Any]:
    """p50/p95 of ``Repo.query`` and ``Repo.pack`` in one process, after a first (cold) call."""
    from ragit.api import Repo

    repo = Repo.open(repo_path)
    out: dict[str, Any] = {}
    for kind, call in (("query", lambda q: repo.query(q)), ("pack", lambda q: repo.pack(q))):
        t0 = time.perf_counter()
        first = call(questions[0])
        first_ms = (time.perf_counter() - t0) * 1e3
        if not first.hits:
            log(f"warning: warm {kind} returned no hits for {questions[0]!r}")
        lat = []
        for q in questions:
            t0 = time.perf_counter()
            call(q)
            lat.append((time.perf_counter() - t0) * 1e3)
        prof = None
        if profile_dir is not None:  # a second, profiled pass; the figures come from the first
            prof = cProfile.Profile()
            for q in questions:
                prof.enable()
                call(q)
                prof.disable()
        save_profile(prof, profile_dir, f"{name}_{kind}")
        out[kind] = {"first_call_ms": first_ms, "p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95),
                     "max_ms": max(lat), "n": len(lat), "embedder": repo.embedder.id}
    return out


# --------------------------------------------------------------------------- questions


TEMPLATES = (
    "how does the {a} {b} handle {c}?",
    "{a} {b} {c}",
    "why was {a} chosen over {b} for the {c} {d}",
    "where is {a} {b} configured",
    "what are the requirements for {a} when {b} {c} fails",
    "decision about {a} and {b}",
    "{a} {b} {c} {d} {e}",
    "explain the {a} of {b} in the {c} plan",
    "which spec defines {a} {b}",
    "glossary term {a}",
)


def make_questions(sampler: WordSampler, n: int) -> list[str]:
    out = []
    for i in range(n):
        words = {k: sampler.mid() for k in "abcde"}
        out.append(TEMPLATES[i % len(TEMPLATES)].format(**words))
    return out


# --------------------------------------------------------------------------- results


@dataclass
class Results:
    metrics: list[dict[str, Any]] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)

    def add(self, key: str, label: str, value: float | None, unit: str, *, embedder: str | None = None,
            note: str = "", cpu: float | None = None) -> None:
        target = TARGETS.get(key)
        met = None
        if target and value is not None:
            op, bound, _ = target
            met = value <= bound if op == "<=" else value >= bound
        self.metrics.append({
            "key": key, "metric": label, "value": value, "unit": unit, "embedder": embedder,
            "target": None if target is None else {"op": target[0], "value": target[1], "unit": target[2]},
            "met": met, "note": note, "cpu": cpu,
        })

    def fail(self, section: str, exc: BaseException) -> None:
        log(f"{section} FAILED: {exc}")
        self.errors.append({"section": section, "error": f"{type(exc).__name__}: {exc}"})


def fmt_value(m: dict[str, Any]) -> str:
    v, unit = m["value"], m["unit"]
    if v is None:
        return "n/a"
    if unit == "ratio":
        return f"{v * 100:.2f} %"
    if unit in ("count",):
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f} {unit}"
    if abs(v) >= 10:
        return f"{v:.1f} {unit}"
    return f"{v:.3g} {unit}" if abs(v) < 1 else f"{v:.2f} {unit}"


def fmt_target(m: dict[str, Any]) -> str:
    t = m["target"]
    if t is None:
        return ""
    bound = f"{t['value'] * 100:g} %" if t["unit"] == "ratio" else f"{t['value']:g} {t['unit']}"
    mark = "" if m["met"] is None else (" ✅" if m["met"] else " ❌")
    return f"≤ {bound}{mark}"


def markdown_table(results: Results) -> str:
    lines = ["| metric | value | target |", "|---|---|---|"]
    for m in results.metrics:
        label = m["metric"] + (f" [{m['embedder'].split(':')[0]}]" if m["embedder"] else "")
        value = fmt_value(m)
        if m.get("cpu") is not None:
            value += f" (cpu {fmt_value({'value': m['cpu'], 'unit': m['unit']})})"
        lines.append(f"| {label} | {value} | {fmt_target(m)} |")
    return "\n".join(lines)


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(), "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_average_at_start": list(os.getloadavg()),
    }
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="utf-8") as fh:
            info["mem_total_gb"] = round(int(fh.readline().split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        info["sqlite"] = __import__("sqlite3").sqlite_version
        info["numpy"] = __import__("numpy").__version__
        info["git"] = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    except Exception as exc:  # noqa: BLE001
        info["versions_error"] = str(exc)
    return info


def ragit_revision() -> dict[str, Any]:
    try:
        sha = subprocess.run(["git", "-C", str(PROJECT), "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(PROJECT), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, check=False).stdout.strip())
        untracked = bool(subprocess.run(["git", "-C", str(PROJECT), "ls-files", "--others", "--exclude-standard",
                                         "src"], capture_output=True, text=True, check=False).stdout.strip())
        return {"sha": sha, "dirty": dirty or untracked}
    except Exception:  # noqa: BLE001
        return {"sha": None, "dirty": None}


# --------------------------------------------------------------------------- sections


def clear_index(repo: Path) -> None:
    for sub in ("store", "manifest", "cache"):
        shutil.rmtree(repo / ".ragit" / sub, ignore_errors=True)


def manifest_bytes(repo: Path, sha: str) -> int:
    return (repo / ".ragit" / "manifest" / f"{sha}.json").stat().st_size


def store_bytes(repo: Path) -> int:
    return dir_bytes(repo / ".ragit" / "store")


def write_embedder_config(repo: Path, provider: str) -> None:
    if provider == "placeholder":
        (repo / ".ragit").mkdir(exist_ok=True)
        (repo / ".ragit" / "config.toml").write_text(
            '[embedding]\nprovider = "placeholder"\ndimensions = 64\n', encoding="utf-8")


def warm_up(work: Path) -> None:
    """Compile and import everything a full ingest and a query use, before anything is timed.

    Children share one bytecode cache (``PYTHONPYCACHEPREFIX`` in the work dir), which starts
    empty: a module a measured command imports for the first time would be compiled inside its
    figure. The per-section warm-ups are dry runs, which never import the embedding and write
    path (numpy, tokenizers, the store writer), so a full ingest of a two-file repository and a
    query run here once, as a fresh process (filling the cache) and in this process (the
    in-process rows then time the work, not first imports)."""
    from ragit.api import Repo

    repo = work / "warm-up"
    init_repo(repo)
    (repo / "docs").mkdir()
    (repo / "docs" / "a.md").write_text("# Warm up\n\nA document that warms the bytecode cache.\n", encoding="utf-8")
    (repo / "b.py").write_text("def warm_up(value):\n    return value + 1\n", encoding="utf-8")
    commit_all(repo, "warm-up")
    ragit(repo, "ingest", "--all", "--format", "json")
    ragit(repo, "query", "warm up", "--format", "json")
    clear_index(repo)
    api = Repo.open(repo)
    api.ingest(all=True)
    api.query("warm up")
    api.close()


def section_docs(res: Results, repo: Path, label: str, *, n_docs: int | None, questions: list[str], runs: int,
                 profile_dir: Path | None) -> None:
    """Sections 1–3 (6k rows) on a typed-doc corpus (or an existing repository)."""
    sec: dict[str, Any] = {"repo": str(repo), "docs": n_docs, "load_average_at_start": list(os.getloadavg())}
    res.sections["docs_corpus"] = sec
    head = git(repo, "rev-parse", "HEAD")

    # Warm-up: compiles bytecode, reads every blob once (page cache) and writes nothing.
    ragit(repo, "ingest", "--all", "--dry-run", "--format", "json")

    try:
        log(f"{label}: in-process ingest (Repo.ingest, embed timed)")
        api = api_ingest(repo)
        sec["api_ingest"] = api
        if profile_dir is not None:
            log(f"{label}: in-process ingest again under cProfile")
            sec["api_ingest_profiled"] = api_ingest(repo, profile_dir, "ingest_docs_api")
        res.add("ingest_1k_beyond_embedder_s", f"{label}: in-process full ingest, work beyond embedder",
                api["beyond_embedder_s"], "s", embedder=api["embedder"])
        res.add("ingest_1k_beyond_embedder_cpu_s", f"{label}: ... the same in CPU time (all threads)",
                api["beyond_embedder_cpu_s"], "s", embedder=api["embedder"])
        res.add("ingest_1k_embed_s", f"{label}: in-process full ingest, time inside embedder.embed",
                api["embed_s"], "s", embedder=api["embedder"])
    except Exception as exc:  # noqa: BLE001
        res.fail("docs api ingest", exc)

    log(f"{label}: CLI ingest --all x{INGEST_RUNS}")
    cli_runs = []
    for _ in range(INGEST_RUNS):  # each on an empty index; the median by CPU is reported
        clear_index(repo)
        cli_runs.append(ragit(repo, "ingest", "--all", "--format", "json"))
    run = sorted(cli_runs, key=lambda r: r.cpu_s)[len(cli_runs) // 2]
    data = run.json()["data"]
    chunks = data["embeddedChunks"]
    sec["cli_ingest_runs"] = [{"wall_s": r.wall_s, "cpu_s": r.cpu_s, "peak_rss_mb": r.max_rss_mb} for r in cli_runs]
    sec.update({"cli_ingest_wall_s": run.wall_s, "cli_ingest_cpu_s": run.cpu_s, "cli_ingest_peak_rss_mb": run.max_rss_mb, "processed": data["processed"],
                "chunks": chunks, "commit": head, "manifest_bytes": manifest_bytes(repo, head),
                "store_bytes": store_bytes(repo)})
    from ragit.config import load_config
    from ragit.embed import embedder_id_for

    emb_id = embedder_id_for(load_config(repo))
    sec["embedder"] = emb_id
    res.add("ingest_1k_cli_s", f"{label}: `ragit ingest --all` wall, median of {INGEST_RUNS} by CPU "
            f"({data['processed']:,} docs, {chunks:,} chunks)",
            run.wall_s, "s", embedder=emb_id, cpu=run.cpu_s)
    res.add("ingest_1k_rss_mb", f"{label}: `ragit ingest --all` peak RSS", run.max_rss_mb, "MB", embedder=emb_id)
    res.add("manifest_1k_mb", f"{label}: manifest per commit", sec["manifest_bytes"] / 1e6, "MB")
    res.add("store_1k_mb", f"{label}: store size (.ragit/store)", sec["store_bytes"] / 1e6, "MB")

    for key, args, name in (
        ("cold_cli_query_6k_s", ["query", questions[0], "--format", "json"], "cold `ragit query --format json`"),
        ("cold_cli_pack_6k_s", ["context", "pack", questions[0], "--format", "json"],
         "cold `ragit context pack --format json`"),
    ):
        try:
            log(f"{label}: {name} x{runs}")
            cold = cold_cli(repo, args, runs)
            sec[key] = cold
            res.add(key, f"{label}: {name} (median of {runs})", cold["median_s"], "s", embedder=emb_id,
                    cpu=cold["median_cpu_s"])
            if key == "cold_cli_query_6k_s":
                res.add("cold_cli_query_6k_rss_mb", f"{label}: ... its peak RSS", cold["peak_rss_mb"], "MB",
                        embedder=emb_id)
            if profile_dir is not None:
                profile_cli(profile_dir, key, args, repo)
        except Exception as exc:  # noqa: BLE001
            res.fail(name, exc)
    try:
        log(f"{label}: cold `ragit query` without a bytecode cache x{runs}")
        cold = cold_cli(repo, ["query", questions[0], "--format", "json"], runs, bytecode=False)
        sec["cold_cli_query_no_bytecode"] = cold
        res.add("cold_cli_query_6k_nopyc_s", f"{label}: cold `ragit query` with PYTHONDONTWRITEBYTECODE=1 (no .pyc for ragit)",
                cold["median_s"], "s", embedder=emb_id, cpu=cold["median_cpu_s"])
    except Exception as exc:  # noqa: BLE001
        res.fail("cold query without bytecode", exc)

    try:
        log(f"{label}: warm API query/pack x{len(questions)}")
        warm = warm_api(repo, questions, profile_dir, "warm_docs")
        sec["warm_api"] = warm
        res.add("warm_api_query_p50_6k_ms", f"{label}: warm `Repo.query` p50 ({chunks:,} chunks)", warm["query"]["p50_ms"],
                "ms", embedder=warm["query"]["embedder"])
        res.add("warm_api_query_p95_6k_ms", f"{label}: warm `Repo.query` p95", warm["query"]["p95_ms"], "ms",
                embedder=warm["query"]["embedder"])
        res.add("warm_api_pack_p50_6k_ms", f"{label}: warm `Repo.pack` p50", warm["pack"]["p50_ms"], "ms",
                embedder=warm["pack"]["embedder"])
        res.add("warm_api_pack_p95_6k_ms", f"{label}: warm `Repo.pack` p95", warm["pack"]["p95_ms"], "ms",
                embedder=warm["pack"]["embedder"])
    except Exception as exc:  # noqa: BLE001
        res.fail("warm api (docs corpus)", exc)


def section_large(res: Results, work: Path, n_docs: int, provider: str, sampler_seed: int, words: list[str],
                  questions: list[str], runs: int, profile_dir: Path | None) -> None:
    repo = work / "corpus-large"
    log(f"large corpus: writing {n_docs:,} docs")
    t0 = time.perf_counter()
    init_repo(repo)
    write_typed_docs(repo, n_docs, WordSampler(words, random.Random(sampler_seed)))
    commit_all(repo, "large corpus")
    write_embedder_config(repo, provider)
    build_s = time.perf_counter() - t0
    log(f"large corpus: CLI ingest --all (embedder {provider})")
    run = ragit(repo, "ingest", "--all", "--format", "json")
    data = run.json()["data"]
    chunks = data["embeddedChunks"]
    head = git(repo, "rev-parse", "HEAD")
    from ragit.config import load_config
    from ragit.embed import embedder_id_for

    emb_id = embedder_id_for(load_config(repo))
    sec = {"docs": n_docs, "chunks": chunks, "build_s": build_s, "cli_ingest_wall_s": run.wall_s, "cli_ingest_cpu_s": run.cpu_s,
           "cli_ingest_peak_rss_mb": run.max_rss_mb, "manifest_bytes": manifest_bytes(repo, head),
           "store_bytes": store_bytes(repo), "embedder": emb_id, "load_average_after_ingest": list(os.getloadavg())}
    res.sections["large_corpus"] = sec
    tag = f"{chunks / 1000:.0f}k"
    res.add("ingest_100k_cli_s", f"{tag} corpus: `ragit ingest --all` wall ({n_docs:,} docs, {chunks:,} chunks)",
            run.wall_s, "s", embedder=emb_id, cpu=run.cpu_s)
    res.add("ingest_100k_rss_mb", f"{tag} corpus: `ragit ingest --all` peak RSS", run.max_rss_mb, "MB", embedder=emb_id)
    res.add("store_100k_mb", f"{tag} corpus: store size", sec["store_bytes"] / 1e6, "MB", embedder=emb_id)
    try:
        log(f"large corpus: warm API query/pack x{len(questions)}")
        warm = warm_api(repo, questions, profile_dir, "warm_large")
        sec["warm_api"] = warm
        for kind, budget_key in (("query", "warm_api_query"), ("pack", "warm_api_pack")):
            res.add(f"{budget_key}_p50_100k_ms", f"{tag} corpus: warm `Repo.{kind}` p50", warm[kind]["p50_ms"], "ms",
                    embedder=emb_id)
            res.add(f"{budget_key}_p95_100k_ms", f"{tag} corpus: warm `Repo.{kind}` p95", warm[kind]["p95_ms"], "ms",
                    embedder=emb_id)
            res.add(f"{budget_key}_first_100k_ms", f"{tag} corpus: first `Repo.{kind}` in a new process",
                    warm[kind]["first_call_ms"], "ms", embedder=emb_id)
    except Exception as exc:  # noqa: BLE001
        res.fail("warm api (large corpus)", exc)
    try:
        log(f"large corpus: cold CLI query x{runs}")
        cold = cold_cli(repo, ["query", questions[0], "--format", "json"], runs)
        sec["cold_cli_query"] = cold
        res.add("cold_cli_query_100k_s", f"{tag} corpus: cold `ragit query --format json` (median of {runs})",
                cold["median_s"], "s", embedder=emb_id, cpu=cold["median_cpu_s"])
        res.add("cold_cli_query_100k_rss_mb", f"{tag} corpus: cold `ragit query` peak RSS", cold["peak_rss_mb"], "MB",
                embedder=emb_id)
        if profile_dir is not None:
            profile_cli(profile_dir, "cold_cli_query_100k", ["query", questions[0], "--format", "json"], repo)
    except Exception as exc:  # noqa: BLE001
        res.fail("cold cli query (large corpus)", exc)


def profile_cli(profile_dir: Path, name: str, args: list[str], cwd: Path) -> None:
    """One extra run of ``ragit <args>`` under ``python -m cProfile`` (dump + text summary)."""
    profile_dir.mkdir(parents=True, exist_ok=True)
    prof_path = profile_dir / f"{name}.prof"
    # main(args) rather than ``-m ragit``: the console entry point ends a one-shot read with
    # os._exit, before cProfile could write its file
    run_cmd([sys.executable, "-c", "import cProfile, sys; from ragit.cli.main import main; "
             "cProfile.run('main(sys.argv[2:])', sys.argv[1])", str(prof_path), *args], cwd)
    buf = io.StringIO()
    stats = pstats.Stats(str(prof_path), stream=buf)
    stats.sort_stats("cumulative").print_stats(40)
    buf.write("\n--- by own time ---\n")
    stats.sort_stats("tottime").print_stats(25)
    (profile_dir / f"{name}.txt").write_text(buf.getvalue(), encoding="utf-8")


# fresh-process `ingest --since` runs (one one-file commit each) behind the reported median
SINCE_RUNS = 5

# A long-lived process (the MCP server, a Python API user) has numpy, ragit and its embedder
# loaded; what an incremental re-ingest costs there is the ingest's own work.
WARM_REINGEST = r"""
import json, statistics, subprocess, sys, time
from pathlib import Path
import numpy
from ragit.api import Repo
root, paths = Path(sys.argv[1]), json.loads(sys.argv[2])
repo = Repo.open(root)
repo.embedder
out = []
for i, rel in enumerate(paths):
    prev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    with (root / rel).open("a", encoding="utf-8") as fh:
        fh.write(f"\n// warm change {i}\n" if rel.endswith(".ts") else f"\n# warm change {i}\n")
    subprocess.run(["git", "commit", "-qam", f"warm change {i}"], cwd=root, check=True)
    started = time.perf_counter()
    result = repo.ingest(since=prev)
    out.append(time.perf_counter() - started)
    assert result.processed == 1, result
print(json.dumps(out))
"""


def section_code_repo(res: Results, work: Path, n_code: int, n_docs: int, words: list[str],
                      profile_dir: Path | None) -> None:
    repo = work / "code-repo"
    rng = random.Random(SEED + 2)
    sampler = WordSampler(words, random.Random(SEED + 3))
    log(f"code repo: writing {n_code:,} code files + {n_docs:,} docs")
    init_repo(repo)
    code_paths = write_code_repo(repo, n_code, n_docs, sampler, rng)
    base = commit_all(repo, "code repo")
    n_files = n_code + n_docs
    tag = f"{n_files / 1000:.0f}k-file repo"

    ragit(repo, "ingest", "--all", "--dry-run", "--format", "json")  # warm-up (bytecode, page cache)
    log("code repo: full ingest --all")
    full = ragit(repo, "ingest", "--all", "--format", "json")
    fdata = full.json()["data"]
    sec: dict[str, Any] = {"files": n_files, "code_files": n_code, "docs": n_docs, "processed": fdata["processed"],
                           "chunks": fdata["embeddedChunks"], "full_ingest_wall_s": full.wall_s, "full_ingest_cpu_s": full.cpu_s,
                           "full_ingest_peak_rss_mb": full.max_rss_mb, "manifest_bytes": manifest_bytes(repo, base),
                           "store_bytes": store_bytes(repo), "load_average_after_ingest": list(os.getloadavg())}
    res.sections["code_repo"] = sec
    res.add("ingest_10k_full_s", f"{tag}: full `ragit ingest --all` ({fdata['processed']:,} files, "
            f"{fdata['embeddedChunks']:,} chunks)", full.wall_s, "s", cpu=full.cpu_s)
    res.add("ingest_10k_rss_mb", f"{tag}: full ingest peak RSS", full.max_rss_mb, "MB")
    res.add("manifest_10k_mb", f"{tag}: manifest per commit", sec["manifest_bytes"] / 1e6, "MB")

    def one_file_commit(n: int) -> str:
        path = code_paths[(n * 7919) % len(code_paths)]
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\n// change {n}\n" if path.suffix == ".ts" else f"\n# change {n}\n")
        return commit_all(repo, f"one-file change {n}")

    log(f"code repo: {SINCE_RUNS} one-file commits, each re-ingested by a fresh `ingest --since`")
    runs = []
    for n in range(1, SINCE_RUNS + 1):
        prev = git(repo, "rev-parse", "HEAD")
        one_file_commit(n if n == 1 else 20 + n)
        runs.append(ragit(repo, "ingest", "--since", prev, "--format", "json"))
    since = sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]  # the median run
    sdata = since.json()["data"]
    sec["since"] = {"wall_s": since.wall_s, "cpu_s": since.cpu_s, "peak_rss_mb": since.max_rss_mb, "processed": sdata["processed"],
                    "reused": sdata["reused"], "chunked": sdata["chunked"], "embedded": sdata["embeddedChunks"],
                    "mode": sdata["mode"], "full_snapshot": sdata["fullSnapshot"],
                    "runs_s": [r.wall_s for r in runs], "runs_cpu_s": [r.cpu_s for r in runs]}
    res.add("reingest_since_one_file_s", f"{tag}: `ragit ingest --since <prev>` after a one-file commit "
            f"(median of {SINCE_RUNS})", since.wall_s, "s", cpu=since.cpu_s)
    res.add("reingest_since_one_file_ratio", f"{tag}: ... as a share of the full ingest", since.wall_s / full.wall_s,
            "ratio")

    log("code repo: one-file commit, ingest --all")
    one_file_commit(2)
    again = ragit(repo, "ingest", "--all", "--format", "json")
    adata = again.json()["data"]
    sec["all_after_one_file"] = {"wall_s": again.wall_s, "cpu_s": again.cpu_s, "peak_rss_mb": again.max_rss_mb,
                                 "processed": adata["processed"], "reused": adata["reused"],
                                 "chunked": adata["chunked"], "embedded": adata["embeddedChunks"]}
    res.add("reingest_all_one_file_s", f"{tag}: `ragit ingest --all` after a one-file commit", again.wall_s, "s",
            cpu=again.cpu_s)
    res.add("reingest_all_one_file_ratio", f"{tag}: ... as a share of the full ingest", again.wall_s / full.wall_s,
            "ratio")
    log("code repo: one-file commits re-ingested in a warm process (Repo.ingest)")
    picked = [str(code_paths[(n * 104729) % len(code_paths)].relative_to(repo)) for n in range(3, 8)]
    warm = run_cmd([sys.executable, "-c", WARM_REINGEST, str(repo), json.dumps(picked)], repo)
    warm_s = json.loads(warm.stdout)
    sec["since_warm"] = {"runs_s": warm_s}
    res.add("reingest_since_warm_one_file_s", f"{tag}: `Repo.ingest(since=prev)` in a warm process after a one-file "
            f"commit (median of {len(warm_s)})", statistics.median(warm_s), "s")
    res.add("reingest_since_warm_one_file_ratio", f"{tag}: ... as a share of the full ingest",
            statistics.median(warm_s) / full.wall_s, "ratio")
    res.add("cli_floor_s", "CLI floor: `ragit --version` (interpreter + click)",
            statistics.median(ragit(repo, "--version").wall_s for _ in range(5)), "s")
    if profile_dir is not None:
        log("code repo: profiling re-ingests (two more one-file commits)")
        prev = git(repo, "rev-parse", "HEAD")
        one_file_commit(3)
        profile_cli(profile_dir, "reingest_since_10k", ["ingest", "--since", prev, "--format", "json"], repo)
        one_file_commit(4)
        profile_cli(profile_dir, "reingest_all_10k", ["ingest", "--all", "--format", "json"], repo)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small corpora for a smoke run")
    p.add_argument("--skip-100k", action="store_true", help="skip the ≈100k-chunk corpus")
    p.add_argument("--skip-10k", action="store_true", help="skip the 10,000-file repository")
    p.add_argument("--embedder", choices=("minilm-static", "placeholder"), default="minilm-static",
                   help="embedder of the ≈100k-chunk corpus (the others use the configured default)")
    p.add_argument("--repo", type=Path, help="measure sections 1-3 on a clone of this repository instead of the "
                                            "generated 1,000-doc corpus")
    p.add_argument("--out", type=Path, default=HERE / "results.json", help="JSON results (default bench/results.json)")
    p.add_argument("--profile", type=Path, metavar="DIR", help="write cProfile dumps (.prof) and summaries (.txt)")
    p.add_argument("--runs", type=int, default=7, help="fresh-process runs per cold CLI metric (default 7)")
    p.add_argument("--queries", type=int, default=50, help="questions per warm API metric (default 50)")
    p.add_argument("--large-docs", type=int, default=None, help="docs in the large corpus (default 16,700)")
    p.add_argument("--keep", action="store_true", help="keep the temporary repositories and print their path")
    args = p.parse_args(argv)

    n_docs = 100 if args.quick else 1000
    n_large = args.large_docs or (1500 if args.quick else 16700)
    n_code, n_code_docs = (800, 200) if args.quick else (8000, 2000)
    runs = 3 if args.quick else args.runs
    n_queries = 20 if args.quick else args.queries

    words, vocab_source = load_vocabulary()
    questions = make_questions(WordSampler(words, random.Random(SEED + 9)), n_queries)
    res = Results()
    started = datetime.now(UTC)
    machine = machine_info()
    work = Path(tempfile.mkdtemp(prefix="ragit-bench-"))
    log(f"work dir {work}")
    cache_bytecode(work / "pycache")
    t_all = time.perf_counter()
    try:
        log("warm-up: bytecode cache and first imports")
        warm_up(work)
        # 1-3: typed-doc corpus (or --repo)
        try:
            if args.repo:
                repo = work / "repo"
                git(work, "clone", "-q", "--no-hardlinks", str(args.repo.resolve()), str(repo))
                cfg = args.repo / ".ragit" / "config.toml"
                if cfg.is_file():
                    (repo / ".ragit").mkdir(exist_ok=True)
                    shutil.copy2(cfg, repo / ".ragit" / "config.toml")
                label = f"repo {args.repo.name}"
                section_docs(res, repo, label, n_docs=None, questions=questions, runs=runs, profile_dir=args.profile)
            else:
                repo = work / "corpus-docs"
                log(f"docs corpus: writing {n_docs:,} docs")
                init_repo(repo)
                write_typed_docs(repo, n_docs, WordSampler(words, random.Random(SEED)))
                commit_all(repo, "typed docs corpus")
                section_docs(res, repo, f"{n_docs:,} docs", n_docs=n_docs, questions=questions, runs=runs,
                             profile_dir=args.profile)
        except Exception as exc:  # noqa: BLE001
            res.fail("docs corpus", exc)
        # 3b: large corpus
        if not args.skip_100k:
            try:
                section_large(res, work, n_large, args.embedder, SEED + 1, words, questions, runs, args.profile)
            except Exception as exc:  # noqa: BLE001
                res.fail("large corpus", exc)
        # 4: 10k-file repository
        if not args.skip_10k:
            try:
                section_code_repo(res, work, n_code, n_code_docs, words, args.profile)
            except Exception as exc:  # noqa: BLE001
                res.fail("code repo", exc)
    finally:
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    table = markdown_table(res)
    print(table)
    if res.errors:
        print("\nErrors:")
        for e in res.errors:
            print(f"- {e['section']}: {e['error'].splitlines()[0][:300]}")
    out = {
        "benchmark": "ingest_query",
        "date": started.isoformat(timespec="seconds"),
        "duration_s": round(time.perf_counter() - t_all, 1),
        "ragit": ragit_revision(),
        "machine": {**machine, "load_average_at_end": list(os.getloadavg())},
        "options": {"quick": args.quick, "skip_100k": args.skip_100k, "skip_10k": args.skip_10k,
                    "embedder_large": args.embedder, "repo": str(args.repo) if args.repo else None,
                    "runs": runs, "queries": n_queries},
        "corpus": {"seed": SEED, "vocabulary": vocab_source, "docs": n_docs, "large_docs": n_large,
                   "code_files": n_code, "code_repo_docs": n_code_docs, "sample_questions": questions[:5]},
        "metrics": res.metrics,
        "sections": res.sections,
        "errors": res.errors,
        "table_markdown": table,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    return 1 if res.errors else 0


if __name__ == "__main__":
    sys.exit(main())
