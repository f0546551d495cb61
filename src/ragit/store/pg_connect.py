"""Connecting to the PostgreSQL store: the DSN, its redaction, typed connection faults and the
binary pgvector adapters (knowledge §2.2; cli-contract ``STORE_UNAVAILABLE``).

psycopg 3 is an optional dependency (``pip install 'ragit[postgres]'``), imported only here and
only when the postgres backend is used. Every fault reaching the server (driver missing, server
down, authentication refused, pgvector missing, connection lost mid-read) is
``STORE_UNAVAILABLE``: transient, retryable, exit 3, with the DSN shown without its password.

Vectors travel in pgvector's binary format (int16 dimensions, int16 unused, big-endian float32
values), so the floats a read returns are bit for bit the floats ingest wrote: exact re-scoring
gives the SQLite backend's scores.
"""

from __future__ import annotations

import os
import re
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from ..errors import RagitError

ENV_DSN = "RAGIT_DATABASE_URL"
CONNECT_TIMEOUT = 10  # seconds: a dead server is reported, never waited on forever

_KEYWORD_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"([?&]password=)([^&]*)", re.IGNORECASE)


def configured_dsn(config) -> str:
    """``RAGIT_DATABASE_URL`` when set, else ``store.dsn`` (cli-contract §10)."""
    env = os.environ.get(ENV_DSN, "").strip()
    if env:
        return env
    store = config.data.get("store") if hasattr(config, "data") else None
    return str((store or {}).get("dsn", "") or "")


def redact_dsn(dsn: str) -> str:
    """The DSN with its password replaced by ``***`` (URL and ``key=value`` forms)."""
    text = dsn.strip()
    if "://" in text:
        try:
            parts = urlsplit(text)
        except ValueError:
            parts = None
        if parts is not None and parts.password is not None:
            user = parts.username or ""
            host = parts.netloc.rpartition("@")[2]
            text = urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))
        return _QUERY_PASSWORD.sub(r"\1***", text)
    return _KEYWORD_PASSWORD.sub(r"\1***", text)


def unavailable(dsn: str, reason: str, message: str) -> RagitError:
    """``STORE_UNAVAILABLE`` for ``dsn`` (never printed with its password)."""
    safe = redact_dsn(dsn)
    if dsn and dsn != safe:
        message = message.replace(dsn, safe)
    return RagitError("STORE_UNAVAILABLE", message, {"backend": "postgres", "dsn": safe, "reason": reason},
                      "ragit doctor")


def _psycopg():
    try:
        import psycopg
    except ImportError:
        return None
    return psycopg


def driver_errors() -> tuple[type[BaseException], ...]:
    """The psycopg exceptions that mean the server cannot serve us (connection-level faults)."""
    psycopg = _psycopg()
    if psycopg is None:
        return ()
    return (psycopg.OperationalError, psycopg.InterfaceError)


def _scrub(text: str, dsn: str) -> str:
    """A driver message without the DSN's password (libpq may echo parts of the DSN)."""
    try:
        password = urlsplit(dsn).password if "://" in dsn else None
    except ValueError:
        password = None
    match = _KEYWORD_PASSWORD.search(dsn) if password is None else None
    if match:
        password = match.group(2).strip("'")
    out = text.strip().splitlines()[0] if text.strip() else "connection failed"
    return out.replace(password, "***") if password else out


def connect(dsn: str, *, autocommit: bool = True):
    """A psycopg connection with the pgvector adapters, or ``STORE_UNAVAILABLE``."""
    if not dsn:
        raise unavailable(dsn, "dsn_missing", "store.backend is postgres but no DSN is set "
                          f"(set {ENV_DSN} or store.dsn)")
    psycopg = _psycopg()
    if psycopg is None:
        raise unavailable(dsn, "driver_missing",
                          "the postgres backend needs psycopg 3: pip install 'ragit[postgres]'")
    try:
        conn = psycopg.connect(dsn, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT,
                               application_name="ragit")
    except psycopg.Error as exc:
        raise unavailable(dsn, "connection_failed", f"cannot connect to PostgreSQL: {_scrub(str(exc), dsn)}") from None
    return conn


def register_vector(conn) -> int | None:
    """Register binary adapters for pgvector's ``vector`` type on ``conn``; its OID, or None
    when the extension is not installed in this database."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format
    from psycopg.types.string import ByteaBinaryLoader

    row = conn.execute("SELECT oid FROM pg_type WHERE typname = 'vector'").fetchone()
    if row is None:
        return None
    oid = int(row[0])

    class _VectorDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: "PgVector") -> bytes:
            return obj.data

    _VectorDumper.oid = oid

    conn.adapters.register_dumper(PgVector, _VectorDumper)
    # a binary vector loads as its wire bytes: bytea's loader (psycopg's C one where installed)
    # does that without a Python call per row
    conn.adapters.register_loader(oid, ByteaBinaryLoader)
    return oid


class PgVector:
    """One float32 vector in pgvector's binary wire format."""

    __slots__ = ("data",)

    def __init__(self, row: "Any") -> None:
        import numpy as np

        values = np.ascontiguousarray(row, dtype=np.float32)
        header = np.array([len(values), 0], dtype=">i2").tobytes()
        self.data = header + values.astype(">f4").tobytes()


def vector_from_wire(data: bytes, dims: int) -> "Any":
    """float32 values of a binary pgvector value."""
    import numpy as np

    return np.frombuffer(data, dtype=">f4", count=dims, offset=4).astype(np.float32)


READ_BATCH = 20_000  # ids per ``= ANY(%s)`` read


def int_array(values) -> str:
    """An ``int8[]`` literal of ``values`` (bind it as ``%s::int8[]``): psycopg adapts a Python list
    one element at a time, which costs a warm query tens of milliseconds for 20k ids."""
    return "{" + ",".join(map(str, values)) + "}"


def gather(conn, dims: int, slots, embedder_id: str):
    """float32 [len(slots), dims] of the vectors at ``slots`` read on ``conn`` (binary pgvector:
    an int16 of dimensions and an unused int16, one float32's width, then big-endian floats)."""
    from operator import itemgetter

    import numpy as np

    unique, inverse = np.unique(np.asarray(slots, dtype=np.int64), return_inverse=True)
    block = np.empty((len(unique), dims), dtype=np.float32)
    found = np.zeros(len(unique), dtype=bool)
    with conn.cursor(binary=True) as cur:
        for start in range(0, len(unique), READ_BATCH):
            cur.execute("SELECT slot, vec FROM vectors WHERE slot = ANY(%s::int8[])",
                        (int_array(unique[start:start + READ_BATCH].tolist()),))
            rows = cur.fetchall()
            if not rows:
                continue
            got = np.fromiter(map(itemgetter(0), rows), dtype=np.int64, count=len(rows))
            data = np.frombuffer(b"".join(map(itemgetter(1), rows)), dtype=">f4").reshape(len(rows), dims + 1)
            at = np.searchsorted(unique, got)
            block[at] = data[:, 1:]
            found[at] = True
    if not found.all():
        from .sqlite import StoreUnreadable

        raise StoreUnreadable(f"{int((~found).sum())} vector(s) of the snapshot are missing for {embedder_id}")
    return block[inverse.reshape(-1)]


class Faults:
    """Turns a connection lost mid-operation into ``STORE_UNAVAILABLE``."""

    def __init__(self, dsn: str):
        self.dsn = dsn

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is not None and isinstance(exc, driver_errors()):
            from psycopg.errors import TransactionRollbackError

            if isinstance(exc, TransactionRollbackError):  # a deadlock or serialisation failure: retry
                raise unavailable(self.dsn, "write_conflict", f"the transaction was rolled back: {exc}") from None
            raise unavailable(self.dsn, "connection_lost", f"the PostgreSQL connection failed: {exc}") from None
        return False


class PgStore(Protocol):
    """What the helpers below :class:`ragit.store.postgres.PostgresStore` (pg_write, pg_ann) use of
    it: they sit under the store and never import it."""

    conn: Any
    dsn: str
    repo_id: str

    def embedder_dims(self, embedder_id: str) -> int | None: ...

    def packed_rows(self, commit_sha: str, embedder_id: str) -> tuple: ...

    def _packed(self, commit_sha: str, embedder_id: str) -> Any: ...

    def gather(self, embedder_id: str, slots: Any) -> Any: ...
