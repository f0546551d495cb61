"""Content-addressed identities (knowledge §9).

Ids derive only from content and chunker parameters, never from commits or paths (except the
document id), so an unchanged file keeps its chunks and citations on every branch and commit.
"""

from __future__ import annotations

import hashlib


def document_id(path: str) -> str:
    """sha1 hex of the repo-relative path: stable across commits, changes on rename."""
    return hashlib.sha1(path.encode("utf-8")).hexdigest()


def git_blob_id(data: bytes) -> str:
    """Git's object id of ``data`` as a blob, so ids can be checked without running git."""
    header = b"blob %d\x00" % len(data)
    return hashlib.sha1(header + data).hexdigest()


def chunker_key(chunker: str, chunker_version: str, masking_version: str | None) -> str:
    """``<chunker>@<version>+mask-<v>`` or ``...+nomask``: everything that shapes chunk text
    (``code:swift/2@1+mask-1``: a revised language table is part of the chunker name)."""
    masking = f"mask-{masking_version}" if masking_version is not None else "nomask"
    return f"{chunker}@{chunker_version}+{masking}"


def masking_of(chunker_key: str) -> str | None:
    """The masking version a chunker key records (``...+mask-1`` → ``"1"``); None for ``nomask``
    or a key that names none."""
    _, sep, masking = chunker_key.rpartition("+mask-")
    return masking if sep else None


def chunk_id(blob_id: str, chunker_key: str, ordinal: int) -> str:
    """sha1 hex of ``blobId NUL chunkerKey NUL ordinal``."""
    payload = f"{blob_id}\x00{chunker_key}\x00{ordinal}".encode("utf-8")
    return hashlib.sha1(payload).hexdigest()


def citation_id(source_type: str, source_id: str, source_version: str) -> str:
    """``cite-`` + 24 hex of sha256; the commit is deliberately not part of it."""
    payload = f"{source_type}\x00{source_id}\x00{source_version}".encode("utf-8")
    return "cite-" + hashlib.sha256(payload).hexdigest()[:24]
