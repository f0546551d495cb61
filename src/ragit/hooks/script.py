"""The POSIX sh text of a managed Git hook (knowledge §14).

Generated deterministically from the hook name and the interpreter recorded at install time, so
re-installing with the same Python rewrites byte-identical files. The hook never blocks or fails
the Git command: the chained original decides the exit status, and the ingest runs detached
from Git with its output in ``.ragit/cache/hooks.log``.
"""

from __future__ import annotations

import shlex

MANAGED_MARKER = "# managed-by-ragit"
CHAINED_SUFFIX = ".ragit-chained"
FAILURE_LINE = "[ragit] incremental ingest failed; run 'ragit ingest --all' to recover."
# Written by the hook before it returns to Git, naming the new HEAD, and removed by the detached
# job when it ends: a read right after `git commit` knows an ingest of that commit is coming even
# before the job's Python has started and taken the store's write lock (knowledge §5.7).
PENDING_RELPATH = ".ragit/cache/hook-ingest.pending"

# The ref each hook's background job diffs against (resolved by the job, not the hook), as a
# shell word: quoted so that no shell reads ``^``; ``"$1"`` is post-checkout's previous HEAD.
BASE_REFS = {"post-commit": "'HEAD^'", "post-merge": "ORIG_HEAD", "post-checkout": '"$1"'}

# The detached job, run as ``sh -c JOB <hook name> <root> <base ref> <python>``. It contains no
# single quote so the hook can hold it in one single-quoted string (printf writes the quote as \047).
_JOB = r"""
hook=$0 base_ref=$2 python=$3
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_COMMON_DIR GIT_OBJECT_DIRECTORY \
	GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_IMPLICIT_WORK_TREE GIT_PREFIX
cd "$1" || exit 0
head=$(git rev-parse HEAD 2>/dev/null)
pending=@PENDING@
settle() {
	if [ "$(cat "$pending" 2>/dev/null)" = "$head" ]; then rm -f "$pending"; fi
}
if command -v ragit >/dev/null 2>&1; then set -- ragit; else set -- "$python" -m ragit; fi
echo "[ragit] $hook $(date -u +%Y-%m-%dT%H:%M:%SZ) head=$head"
if base=$(git rev-parse --verify --quiet "$base_ref^{commit}"); then
	echo "[ragit] ragit ingest --since $base"
	"$@" ingest --since "$base" --format text && settle && exit 0
else
	echo "[ragit] base $base_ref does not resolve"
fi
echo "[ragit] ragit ingest --all"
"$@" ingest --all --format text && settle && exit 0
settle
printf "@FAILURE@\n"
""".replace("@FAILURE@", FAILURE_LINE.replace("'", r"\047")).replace("@PENDING@", PENDING_RELPATH)


def hook_script(name: str, python: str) -> str:
    """The managed hook ``name`` (a key of ``BASE_REFS``) calling ``python -m ragit`` as fallback."""
    if name not in BASE_REFS:
        raise ValueError(f"not a managed hook: {name!r}")
    branch_only = ""
    if name == "post-checkout":
        branch_only = (
            "\n# File checkouts (third argument 0) change no commit: nothing to index.\n"
            'if [ "${3:-}" != "1" ]; then\n\texit "$ragit_status"\nfi\n'
        )
    return f"""#!/bin/sh
{MANAGED_MARKER}
# ragit {name} hook, written by `ragit hooks install`; `ragit hooks uninstall` removes it
# and moves back the original hook, if there was one.
# 1. The original hook ({name}{CHAINED_SUFFIX}) runs first with the same arguments and
#    standard input; its exit status is this hook's exit status.
# 2. RAGIT_SKIP_HOOKS=1 stops here.
# 3. The new HEAD is indexed in the background, detached from Git, with the output appended
#    to .ragit/cache/hooks.log of the worktree root.

ragit_chained="$(dirname -- "$0")/{name}{CHAINED_SUFFIX}"
ragit_status=0
if [ -f "$ragit_chained" ] && [ -x "$ragit_chained" ]; then
\t"$ragit_chained" "$@"
\tragit_status=$?
fi

if [ "${{RAGIT_SKIP_HOOKS:-}}" = "1" ]; then
\texit "$ragit_status"
fi
{branch_only}
ragit_root=$(git rev-parse --show-toplevel 2>/dev/null) || exit "$ragit_status"
if [ -z "$ragit_root" ] || ! mkdir -p "$ragit_root/.ragit/cache" 2>/dev/null; then
\texit "$ragit_status"
fi

# Announce the ingest of the new HEAD before returning to Git (PENDING_RELPATH).
if ragit_head=$(git rev-parse --verify --quiet HEAD 2>/dev/null); then
	printf '%s\\n' "$ragit_head" > "$ragit_root/{PENDING_RELPATH}" 2>/dev/null || :
fi

ragit_job='{_JOB}'
ragit_detach=
if command -v setsid >/dev/null 2>&1; then
\tragit_detach=setsid
fi
$ragit_detach nohup sh -c "$ragit_job" {name} "$ragit_root" {BASE_REFS[name]} {shlex.quote(python)} \\
\t</dev/null >>"$ragit_root/.ragit/cache/hooks.log" 2>&1 &
exit "$ragit_status"
"""

