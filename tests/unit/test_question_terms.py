"""How a question becomes keyword terms and embedding passages (retrieve/search.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from ragit.embed.placeholder import PlaceholderEmbedder
from ragit.retrieve.search import MAX_PASSAGES, query_terms, question_cosines, question_passages


def test_distinct_terms_by_default_first_seen_order():
    # stemmed (rotation -> rotat), stop words out ("the")
    assert query_terms("Token rotation token the token") == ["token", "rotat"]


def test_repeats_keep_each_term_up_to_the_cap_consecutively():
    question = "token rotation token the token token"
    assert query_terms(question, 2) == ["token", "token", "rotat"]
    assert query_terms(question, 3) == ["token", "token", "token", "rotat"]
    assert query_terms(question, 1) == query_terms(question)


def test_repeats_count_identifier_parts_too():
    # sendFile gives its joined form and its parts (stemmed: sendfil); "send" repeats a part
    assert query_terms("sendFile send") == ["sendfil", "send", "file"]
    assert query_terms("sendFile send", 3) == ["sendfil", "send", "send", "file"]


def test_question_terms_are_the_index_terms():
    """A question and the code it names meet on the same terms, whatever the identifier style."""
    from ragit.lexical import term_counts

    for question, code in (("send_file", "def sendFile(self):"), ("where are redirects followed",
                           "def _send_handling_redirects(): follow the redirect"),
                           ("HTTPServerError", "raise HttpServerError()")):
        assert set(query_terms(question)) <= set(term_counts(code)), (question, code)


def test_short_question_is_one_passage_verbatim():
    question = "  why does  the session\ncookie expire? "
    assert question_passages(question, 32) == [question]
    assert question_passages(" ".join(["w"] * 32), 32) == [" ".join(["w"] * 32)]


def test_long_question_splits_into_word_passages():
    words = [f"w{i}" for i in range(70)]
    passages = question_passages("\n".join(words), 32)
    assert passages == [" ".join(words[:32]), " ".join(words[32:64]), " ".join(words[64:])]


def test_zero_words_means_the_whole_question():
    question = " ".join(["w"] * 500)
    assert question_passages(question, 0) == [question]


@given(st.integers(min_value=0, max_value=5000), st.integers(min_value=1, max_value=64))
def test_passages_cover_every_word_once_and_stay_bounded(n, size):
    words = [f"w{i}" for i in range(n)]
    passages = question_passages(" ".join(words), size)
    assert len(passages) <= max(1, MAX_PASSAGES)
    if n > size:
        assert " ".join(passages).split() == words
        assert all(len(p.split()) >= 1 for p in passages)


def test_cosine_is_the_best_passage_cosine():
    emb = PlaceholderEmbedder()
    question = " ".join(["refresh token rotation"] * 12 + ["store backend snapshots atomically"] * 8)
    texts = ["refresh token rotation", "store backend snapshots", "glossary of terms"]
    matrix = emb.embed(texts)
    got = question_cosines(matrix, emb, question, 32)
    passages = emb.embed(question_passages(question, 32))
    assert len(passages) > 1
    np.testing.assert_allclose(got, (matrix @ passages.T).max(axis=1), rtol=0, atol=1e-6)
    whole = question_cosines(matrix, emb, question, 0)
    np.testing.assert_allclose(whole, matrix @ emb.embed([question])[0], rtol=0, atol=1e-6)
    assert got.dtype == np.float64 and np.all(got <= 1.0 + 1e-9) and np.all(got >= -1.0 - 1e-9)
