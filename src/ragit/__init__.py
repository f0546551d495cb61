"""ragit: commit-bound, cited, budgeted context for AI coding agents.

The public API is small: :class:`Repo` (open a repository, ingest, query, pack, packet) and
:class:`RagitError` (every typed failure). Imports are lazy so ``import ragit`` stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not ``typing``: the CLI's forwarding client must start without it

from ._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from .api import Repo
    from .errors import RagitError

__all__ = ["Repo", "RagitError", "open_repo", "__version__"]


def open_repo(path: str = ".") -> "Repo":
    """Open the git repository containing ``path``."""
    from .api import Repo

    return Repo.open(path)


def __getattr__(name: str) -> object:
    if name == "Repo":
        from .api import Repo

        return Repo
    if name == "RagitError":
        from .errors import RagitError

        return RagitError
    raise AttributeError(name)
