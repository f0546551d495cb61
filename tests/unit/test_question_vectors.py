"""A warm process's question vectors (ragit.retrieve.search._question_vectors): kept per embedder,
so a question asked again is not embedded again, within a bound on the vectors kept."""

from __future__ import annotations

import numpy as np

from ragit.retrieve import search


class _Counting:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def embed(self, texts):
        self.asked.append(list(texts))
        return np.ones((len(texts), 4), dtype=np.float32)


class _Slotted:
    __slots__ = ("asked",)  # no __weakref__: nothing can be kept for it

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def embed(self, texts):
        self.asked.append(list(texts))
        return np.ones((len(texts), 4), dtype=np.float32)


def test_a_question_is_embedded_once_per_embedder():
    one, two = _Counting(), _Counting()
    first = search._question_vectors(one, "how are routes grouped", 0)
    assert search._question_vectors(one, "how are routes grouped", 0) is first
    assert not first.flags.writeable
    search._question_vectors(two, "how are routes grouped", 0)
    search._question_vectors(one, "how are routes grouped", 32)  # another passage length: another key
    assert one.asked == [["how are routes grouped"], ["how are routes grouped"]] and len(two.asked) == 1


def test_the_vectors_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(search, "QUESTION_ROWS", 3)
    embedder = _Counting()
    for q in ("a", "b", "c", "d"):
        search._question_vectors(embedder, q, 0)
    search._question_vectors(embedder, "a", 0)  # the least recently asked went first
    search._question_vectors(embedder, "d", 0)  # still kept: now the most recently asked
    assert embedder.asked == [["a"], ["b"], ["c"], ["d"], ["a"]]
    kept = search._ASKED[embedder]
    assert list(kept) == [("c", 0), ("a", 0), ("d", 0)] and kept.rows == 3


def test_an_embedder_that_cannot_be_referenced_weakly_keeps_nothing():
    embedder = _Slotted()
    for _ in range(2):
        assert search._question_vectors(embedder, "x", 0).shape == (1, 4)
    assert embedder.asked == [["x"], ["x"]]


def test_a_repo_lends_every_read_one_embedder(tmp_path):
    from ragit.api import Repo

    repo = Repo(tmp_path, {}, None)
    assert repo._lazy_embedder() is repo._lazy_embedder()
