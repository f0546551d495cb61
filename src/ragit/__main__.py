"""``python -m ragit`` runs the CLI (used by git hooks when ``ragit`` is not on PATH)."""

from ragit.cli.main import main

main()
