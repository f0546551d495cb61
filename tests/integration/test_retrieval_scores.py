"""What the vector and keyword inputs of the hybrid formula mean (knowledge §11.3–11.5)."""

from __future__ import annotations

import numpy as np

from conftest import write_placeholder_config
from ragit import Repo
from ragit.embed.placeholder import PlaceholderEmbedder

FILES = {
    "docs/a.md": "# Alpha\n\nrefresh tokens rotate on every use\n\n## More\n\ntoken rotation keeps sessions safe\n",
    "docs/b.md": "# Beta\n\nthe store backend writes snapshots atomically\n",
    "src/tokens.py": "def rotate_token(token):\n    return token[::-1]\n\n\ndef refresh(session):\n    return session\n",
}


def _repo(git_repo, normalization: str) -> Repo:
    write_placeholder_config(git_repo.root)
    cfg = git_repo.root / ".ragit" / "config.toml"
    cfg.write_text(cfg.read_text() + f'\n[retrieval]\nvector_normalization = "{normalization}"\n')
    git_repo.commit("c", FILES)
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    return repo


def _chunk_vectors(repo: Repo, hits_by_path: dict) -> dict:
    """Every chunk vector of each hit's file, recomputed from the stored text."""
    from ragit.store import open_store_read

    emb = PlaceholderEmbedder()
    store = open_store_read(repo.root, repo.config)
    try:
        rows = store.fetch_rows(repo.git.run("rev-parse", "HEAD").decode().strip(), list(range(1, 100)))
    finally:
        store.close()
    out: dict[str, list] = {}
    for row in rows.values():
        out.setdefault(row.path, []).append(emb.embed([f"{row.title}\n{row.text}"])[0])
    return out


def test_raw_cosine_when_normalization_is_none(git_repo):
    repo = _repo(git_repo, "none")
    result = repo.query("refresh token rotation", top_k=10)
    q = PlaceholderEmbedder().embed(["refresh token rotation"])[0]
    for hit in result.hits:
        v = PlaceholderEmbedder().embed([f"{hit.section_title}\n{hit.text}"])[0]
        assert abs(hit.score_vector - float(v @ q)) < 1e-6
    best = max(h.score_keyword for h in result.hits)
    assert best == 1.0  # keyword normalised by the best lexical match (max)


def test_file_blend_mixes_chunk_and_file_cosine(git_repo):
    repo = _repo(git_repo, "file_blend")
    result = repo.query("refresh token rotation", top_k=10)
    q = PlaceholderEmbedder().embed(["refresh token rotation"])[0]
    vectors = _chunk_vectors(repo, {})
    for hit in result.hits:
        v = PlaceholderEmbedder().embed([f"{hit.section_title}\n{hit.text}"])[0]
        total = np.sum(vectors[hit.path], axis=0)
        file_cos = float(total @ q / np.linalg.norm(total))
        assert abs(hit.score_vector - (0.7 * float(v @ q) + 0.3 * file_cos)) < 1e-6
        assert -1.0 <= hit.score_vector <= 1.0


def test_symbols_let_identifier_styles_meet(git_repo):
    repo = _repo(git_repo, "file_blend")
    hits = repo.query("rotateToken", top_k=3).hits
    assert hits[0].path == "src/tokens.py" and hits[0].score_keyword == 1.0


LONG = " ".join(["refresh token rotation keeps sessions safe"] * 5 + ["store backend writes snapshots atomically"] * 4)


def test_long_question_scores_chunks_by_their_best_passage(git_repo):
    from ragit.retrieve.search import question_passages

    repo = _repo(git_repo, "file_blend")
    passages = PlaceholderEmbedder().embed(question_passages(LONG, repo.config["retrieval"]["passage_words"]))
    assert len(passages) == 2
    vectors = _chunk_vectors(repo, {})
    result = repo.query(LONG, top_k=10)
    assert result.hits
    for hit in result.hits:
        v = PlaceholderEmbedder().embed([f"{hit.section_title}\n{hit.text}"])[0]
        chunk = float(np.max(passages @ v))
        file_cos = sum(float(np.max(passages @ u)) for u in vectors[hit.path]) / float(
            np.linalg.norm(np.sum(vectors[hit.path], axis=0)))
        assert abs(hit.score_vector - (0.7 * chunk + 0.3 * file_cos)) < 1e-6


def test_normalization_none_embeds_the_whole_question(git_repo):
    repo = _repo(git_repo, "none")
    q = PlaceholderEmbedder().embed([LONG])[0]
    for hit in repo.query(LONG, top_k=10).hits:
        v = PlaceholderEmbedder().embed([f"{hit.section_title}\n{hit.text}"])[0]
        assert abs(hit.score_vector - float(v @ q)) < 1e-6


def test_query_term_repeats_weigh_repeated_terms(git_repo):
    from ragit.retrieve.search import keyword_raw, load_matrix
    from ragit.store import open_store_read

    write_placeholder_config(git_repo.root)
    git_repo.commit("c", {"docs/a.md": "# A\n\nzebra lives here\n", "docs/b.md": "# B\n\nquokka quokka lives\n"})
    question = "quokka zebra zebra zebra"
    cfg = git_repo.root / ".ragit" / "config.toml"
    base = cfg.read_text()
    tops = {}
    for repeats in (1, 3):
        cfg.write_text(base + f"\n[retrieval]\nquery_term_repeats = {repeats}\n")
        repo = Repo.open(git_repo.root)
        repo.ingest(all=True)
        hits = repo.query(question, top_k=2).hits
        store = open_store_read(repo.root, repo.config)
        try:
            snap = load_matrix(store, git_repo.head(), "placeholder:sha1:64:v1")
            scores = keyword_raw(store, snap, question, term_repeats=repeats)[0]
            raw = {int(r): float(v) for r, v in zip(snap.rowids, scores) if v > 0}
        finally:
            store.close()
        tops[repeats] = {h.path: h.score_keyword for h in hits}
        best = max(raw.values())
        assert sorted(h.score_keyword for h in hits) == sorted(r / best for r in raw.values())
        warm = [repo.query(question, top_k=2) for _ in range(2)][-1].hits  # second read: BM25 mirror
        assert [(h.chunk_id, h.score_keyword) for h in warm] == [(h.chunk_id, h.score_keyword) for h in hits]
    assert tops[1]["docs/b.md"] == 1.0 > tops[1]["docs/a.md"]  # distinct terms: two quokkas beat one zebra
    assert tops[3]["docs/a.md"] == 1.0 > tops[3]["docs/b.md"]  # the question's zebra counts three times
