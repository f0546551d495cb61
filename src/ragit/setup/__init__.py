"""``ragit setup <client>``: wire ragit into an agent client (cli-contract §12).

Modules, one concern each: ``clients`` (where each client reads what), ``guidance`` (the
AGENTS.md / CLAUDE.md section), ``jsonedit`` and ``textedit`` (formatting-preserving,
invertible edits), ``edits`` (apply and undo per file), ``record`` (what setup added),
``run`` (plan, write, render) and ``hook`` (the Claude Code hooks' entry point). Nothing is
imported here, so a hook (run after every tool call) starts without the planning modules.
"""
