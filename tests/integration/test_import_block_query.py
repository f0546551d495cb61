"""A file's import block end to end: the lines before a TypeScript file's first definition list
the names it imports, so they match a question about what the file does while implementing none
of it (immer: "how does a draft proxy record changes to an object" showed four files by their
``import { createProxy, markChanged, ... } from "../internal"``). ``query --explain`` lets the
file's best other chunk stand for the file, with the ``imports`` factor, and the file keeps its
place."""

from __future__ import annotations

from conftest import explained_hits, rerank_factors, write_placeholder_config

MAPSET = '''import {
\tDraftState,
\tcreateDraftProxy,
\tmarkDraftChanged,
\trecordDraftChanges,
\tlatestDraftState,
} from "../internal"

export function enableMapSet() {
\tclass DraftMap extends Map {
\t\tset(key: unknown, value: unknown) {
\t\t\tconst state = this.state
\t\t\tif (!state.modified) {
\t\t\t\tstate.modified = true
\t\t\t}
\t\t\tstate.copy.set(key, value)
\t\t\treturn this
\t\t}
\t}
\treturn DraftMap
}
'''

SCOPE = '''import { die } from "./errors"

export function revokeScope(scope: { drafts: unknown[] }) {
\tscope.drafts.length = 0
\tdie(0)
}
'''


def test_an_import_block_lets_its_files_code_stand_for_the_file(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("init", {"src/plugins/mapset.ts": MAPSET, "src/core/scope.ts": SCOPE})
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0

    question = "how does a draft record changes to its state"
    hits = explained_hits(cli, git_repo.root, question, top_k=10)
    titles = [(h["path"], h["sectionTitle"]) for h in hits]
    assert titles[0] == ("src/plugins/mapset.ts", "function enableMapSet")
    assert rerank_factors(hits[0])["imports"] > 0
    block = hits[titles.index(("src/plugins/mapset.ts", "module"))]
    assert rerank_factors(block)["imports"] == -rerank_factors(hits[0])["imports"]
    assert block["scoreFinal"] < hits[0]["scoreFinal"]
    # every file is shown by its code first
    for path in ("src/plugins/mapset.ts", "src/core/scope.ts"):
        assert [t for p, t in titles if p == path][0].startswith("function")
    # the first hit is the same whatever the number asked for (the rule is applied to the rows
    # that can be hits, and again while a newly reached one is an import block)
    assert [(h["path"], h["sectionTitle"]) for h in explained_hits(cli, git_repo.root, question, top_k=1)] \
        == titles[:1]
