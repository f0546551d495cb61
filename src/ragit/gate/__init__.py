"""The edit-time evidence gate (knowledge §22.4, issue 17 item 3).

``served`` is the per-session record of the citations the MCP server last handed out;
``check`` compares them (and memory items citing the edited file) with the working tree; ``hook``
is the Claude Code ``PreToolUse`` entry. Nothing here imports click, numpy or the store: the hook
runs before every edit and must stay within a few tens of milliseconds.
"""
