"""Commit history as searchable evidence: the history index behind ``query --scope history``."""
