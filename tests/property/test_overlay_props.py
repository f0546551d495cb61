"""Property: a withdrawn artifact (superseded, retracted, archived) never reaches any overlay.

Random artifact sets go through random lifecycle sequences with the library API (allowed and
forbidden moves alike); whatever state they end in, every overlay scope must contain only
artifacts whose status allows it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragit.config import defaults
from ragit.errors import RagitError
from ragit.memory.artifact_overlay import overlay_candidates
from ragit.memory.artifacts import capture, load_artifacts, transition

CONFIG = defaults()
WITHDRAWN = {"superseded", "retracted", "archived"}
TARGETS = ["reviewed", "promoted", "superseded", "retracted", "archived"]

ARTIFACT = st.fixed_dictionaries(
    {"scope": st.sampled_from(["session", "harness", "evidence"]), "with_evidence": st.booleans()}
)
MOVES = st.lists(st.tuples(st.integers(min_value=0, max_value=7), st.sampled_from(TARGETS),
                           st.integers(min_value=0, max_value=7)), max_size=14)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(artifacts=st.lists(ARTIFACT, min_size=1, max_size=6), moves=MOVES)
def test_withdrawn_artifacts_are_never_candidates(artifacts, moves):
    # Durability is not under test; skipping fsync keeps hundreds of record writes fast.
    with tempfile.TemporaryDirectory() as tmp, mock.patch("ragit.fsutil.os.fsync"):
        root = Path(tmp)
        ids = []
        for n, spec in enumerate(artifacts):
            payload = {"scope": spec["scope"], "kind": "finding", "title": f"finding {n}",
                       "text": f"token rotation {n}"}
            if spec["with_evidence"] or spec["scope"] == "evidence":
                payload["evidence"] = [{"path": f"src/m{n}.py", "excerpt": f"rotate {n}"}]
            ids.append(capture(root, CONFIG, payload)["artifact"]["artifactId"])
        for who, target, other in moves:
            art_id, by = ids[who % len(ids)], ids[other % len(ids)]
            try:
                transition(root, CONFIG, art_id, target, by=by if target == "superseded" else None)
            except RagitError as exc:  # forbidden edge, or superseding by itself
                assert exc.code in ("ARTIFACT_TRANSITION_INVALID", "INPUT_INVALID")

        records, warnings = load_artifacts(root, CONFIG)
        assert warnings == [] and len(records) == len(ids)
        status = {a.artifact_id: a.status for a in records}
        for scope in ("session", "harness", "evidence", "all"):
            for cand in overlay_candidates(root, CONFIG, scope):
                assert status[cand.artifact_id] not in WITHDRAWN
                assert cand.status == status[cand.artifact_id]
        withdrawn = {i for i, s in status.items() if s in WITHDRAWN}
        eligible_bodies = {i for i, s in status.items() if s in ("reviewed", "promoted")}
        assert {c.artifact_id for c in overlay_candidates(root, CONFIG, "all")} == eligible_bodies
        assert not withdrawn & {c.artifact_id for c in overlay_candidates(root, CONFIG, "evidence")}
