"""Retrieval-quality evaluation on real history (knowledge §21).

``eval mine`` turns a repository's own commits into file-localisation tasks; ``eval run``
indexes each task's commit into a separate evaluation store and measures how early the gold
files come back. Quality work on retrieval is only as good as this instrument, so everything
here is deterministic except the measured seconds.
"""
