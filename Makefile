# Two entry points on a fresh machine (Python 3.11 + git): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Index this very repository at HEAD, then answer a query and a context pack.
demo: $(STAMP)
	$(BIN)/ragit ingest --all --format text
	$(BIN)/ragit query "how does ingest reuse unchanged blobs" --view minimal --format text
	$(BIN)/ragit context pack "add a new store backend" --budget 600 --view minimal --format text
	$(BIN)/ragit why src/ragit/api.py:L1-L3 --limit 3 --format text

# The MCP TypeScript-client test (tests/integration/test_mcp_typescript.py) runs the official SDK,
# pinned by tests/mcp_ts/package-lock.json, with Node (>= 18) from the npm registry.
NPM_STAMP := tests/mcp_ts/node_modules/.installed

$(NPM_STAMP): tests/mcp_ts/package.json tests/mcp_ts/package-lock.json
	npm ci --prefix tests/mcp_ts --no-audit --no-fund
	touch $(NPM_STAMP)

test: $(STAMP) $(NPM_STAMP)
	$(BIN)/python -m pytest -n 2 -q

# Every speed row of the README (issue 15): each script prints its table and writes its JSON;
# speed_table.py then gathers them with the load each was measured under. The 1M-chunk store of
# vector_scale.py takes ~5 min to build the first time (cached under /tmp afterwards); ingest_memory.py
# then ingests that corpus once more, sampling the whole process tree's memory (the measured 1M row).
bench: $(STAMP)
	$(BIN)/python bench/ingest_query.py
	$(BIN)/python bench/index_speed.py
	$(BIN)/python bench/repo_ingest.py
	$(BIN)/python bench/serve_query.py
	$(BIN)/python bench/vector_scale.py --sizes 100000,1000000
	$(BIN)/python bench/serve_query.py --repo /tmp/ragit-vector-scale/default-1000000/repo --out bench/serve_query_1m.json
	$(BIN)/python bench/ingest_memory.py --repo /tmp/ragit-vector-scale/default-1000000/repo --workers default
	$(BIN)/python bench/today_ratio.py --sympy
	$(BIN)/python bench/semble_peer.py
	$(BIN)/python bench/speed_table.py

clean:
	rm -rf $(VENV) .ragit/store .ragit/cache
