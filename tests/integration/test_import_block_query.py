"""Chunks that stand in for their file's code, end to end. The lines before a TypeScript file's
first definition list the names it imports, so they match a question about what the file does
while implementing none of it (immer: "how does a draft proxy record changes to an object" showed
four files by their ``import { createProxy, markChanged, ... } from "../internal"``); a method that
shows its object names every field (httpcore's ``ConnectionPool.__repr__`` counts idle
connections). ``query --explain`` lets the file's best other chunk stand for the file, with the
``stand-in`` factor, and the file keeps its place."""

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
    assert rerank_factors(hits[0])["stand-in"] > 0
    block = hits[titles.index(("src/plugins/mapset.ts", "module"))]
    assert rerank_factors(block)["stand-in"] == -rerank_factors(hits[0])["stand-in"]
    assert block["scoreFinal"] < hits[0]["scoreFinal"]
    # every file is shown by its code first
    for path in ("src/plugins/mapset.ts", "src/core/scope.ts"):
        assert [t for p, t in titles if p == path][0].startswith("function")
    # the first hit is the same whatever the number asked for (the rule is applied to the rows
    # that can be hits, and again while a newly reached one is an import block)
    assert [(h["path"], h["sectionTitle"]) for h in explained_hits(cli, git_repo.root, question, top_k=1)] \
        == titles[:1]


POOL = """package pool

import "fmt"

type Pool struct {
\tidle   []*Conn
\tactive int
}

// String shows the pool: idle connections, active connections.
func (p *Pool) String() string {
\treturn fmt.Sprintf("pool: %d idle connections, %d active connections (idle connections kept: %d)",
\t\tlen(p.idle), p.active, len(p.idle))
}

// Acquire returns a connection for a request: the last idle one, else a new one.
func (p *Pool) Acquire() *Conn {
\tif n := len(p.idle); n > 0 {
\t\tc := p.idle[n-1]
\t\tp.idle = p.idle[:n-1]
\t\treturn c
\t}
\treturn dial()
}
"""


def test_a_display_method_lets_its_files_code_stand_for_the_file_unless_asked_for(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("init", {"pool/pool.go": POOL, "pool/conn.go": "package pool\n\ntype Conn struct{}\n\n"
                             "func dial() *Conn {\n\treturn &Conn{}\n}\n"})
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0

    hits = explained_hits(cli, git_repo.root, "how does the pool pick an idle connection", top_k=10)
    titles = [(h["path"], h["sectionTitle"]) for h in hits]
    assert titles[0] == ("pool/pool.go", "method Pool.Acquire")
    assert rerank_factors(hits[0])["stand-in"] > 0
    shown = hits[titles.index(("pool/pool.go", "method Pool.String"))]
    assert rerank_factors(shown)["stand-in"] < 0
    # asked how the pool is shown, the method stands for itself
    hits = explained_hits(cli, git_repo.root, "how is the pool of idle connections printed", top_k=10)
    assert (hits[0]["path"], hits[0]["sectionTitle"]) == ("pool/pool.go", "method Pool.String")
    assert "stand-in" not in rerank_factors(hits[0])
