"""A small real history for ``eval`` and ``tune`` tests: modules with made-up vocabularies, and
commits whose messages name words of the module they change.

The placeholder embedder's vectors carry almost nothing about such words, so on this history
keyword search finds the changed module and a vector-heavy configuration does not: a setting
that clearly helps, honestly (``tune`` must find it), and one that clearly hurts (the baseline
gate must catch it).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from conftest import GitRepo, write_placeholder_config

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


def vocabulary(n: int) -> list[str]:
    """``n`` distinct made-up words (``babax``, ``babex``, …): no stop word, no English stem."""
    words = (a + b + c + d + "x" for a, b, c, d in itertools.product(_CONSONANTS, _VOWELS, _CONSONANTS, _VOWELS))
    return list(itertools.islice(words, n))


def build_history(repo: GitRepo, files: int = 30, commits: int = 32, alpha: float | None = None) -> GitRepo:
    """``files`` modules, then ``commits`` commits that each change one module and say which
    of its words the change is about. ``alpha`` writes ``retrieval.alpha`` into the config."""
    write_placeholder_config(repo.root)
    if alpha is not None:
        with (repo.root / ".ragit" / "config.toml").open("a", encoding="utf-8") as fh:
            fh.write(f"\n[retrieval]\nalpha = {alpha}\n")
    words = vocabulary(files * 6)
    texts = {}
    for i in range(files):
        w = words[i * 6:(i + 1) * 6]
        texts[f"src/pkg/m{i:02d}.py"] = (f'"""Module about {" ".join(w)}."""\n\n\ndef run_{i}(x):\n'
                                         f'    """{w[0]} {w[1]} {w[2]}: {w[3]} {w[4]} {w[5]}."""\n    return x\n')
    repo.commit("Initial layout", dict(texts))
    for k in range(commits):
        i = (k * 7) % files
        w = words[i * 6:(i + 1) * 6]
        path = f"src/pkg/m{i:02d}.py"
        texts[path] += f"\n\ndef step_{k}(x):\n    return x + {k}\n"
        repo.commit(f"Adjust the {w[k % 6]} {w[(k + 2) % 6]} flow", {path: texts[path]})
    return repo


def set_alpha(root: Path, alpha: float) -> None:
    """Rewrite the config with ``retrieval.alpha``."""
    from ragit.config import load_config, write_config

    config = load_config(root)
    config.data["retrieval"]["alpha"] = alpha
    write_config(root, config)
