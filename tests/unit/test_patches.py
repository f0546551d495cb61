"""The unified-diff parser (ragit.gitsnap.patches) and diff masking (ragit.history.hunks)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.gitsnap.patches import parse_patch, unquote_path
from ragit.history.hunks import capped, masked_diff

PATCH = """diff --git a/src/a.py b/src/a.py
index 1111111..2222222 100644
--- a/src/a.py
+++ b/src/a.py
@@ -1,3 +1,4 @@ def f():
 keep
--- a/looks-like-a-header
+diff --git a/not/a/file b/x
+added
 tail
@@ -10 +11,0 @@
-gone
diff --git a/old.md b/new.md
similarity index 90%
rename from old.md
rename to new.md
--- a/old.md
+++ b/new.md
@@ -2,1 +2,1 @@
-x
+y
\\ No newline at end of file
diff --git a/img.png b/img.png
Binary files a/img.png and b/img.png differ
diff --git "a/we\\tird.py" "b/we\\tird.py"
new file mode 100644
--- /dev/null
+++ "b/we\\tird.py"
@@ -0,0 +1 @@
+print(1)
diff --cc merged.py
@@@ -1,1 -1,1 +1,1 @@@
- a
 -b
++c
"""


def test_parse_patch_uses_hunk_counts():
    files = parse_patch(PATCH)
    assert [f.path for f in files] == ["src/a.py", "new.md", "img.png", "we\tird.py"]
    a = files[0]
    assert len(a.hunks) == 2
    first = a.hunks[0]
    assert (first.old_start, first.old_count, first.new_start, first.new_count) == (1, 3, 1, 4)
    assert first.context == "def f():"
    # a removed line that reads like a header and an added "diff --git" line stay in the hunk
    assert first.lines == (" keep", "--- a/looks-like-a-header", "+diff --git a/not/a/file b/x", "+added", " tail")
    assert first.new_range == (1, 4)
    second = a.hunks[1]
    assert (second.old_count, second.new_count, second.lines) == (1, 0, ("-gone",))
    assert second.new_range is None
    renamed = files[1]
    assert (renamed.old_path, renamed.new_path) == ("old.md", "new.md")
    assert renamed.hunks[0].lines == ("-x", "+y", "\\ No newline at end of file")
    assert files[2].binary and files[2].hunks == []
    added = files[3]
    assert added.old_path is None and added.hunks[0].text() == "@@ -0,0 +1,1 @@\n+print(1)"


def test_unquote_path():
    assert unquote_path('"a\\tb"') == "a\tb"
    assert unquote_path('"caf\\303\\251.py"') == "café.py"
    assert unquote_path("plain.py") == "plain.py"


def test_masked_diff_sees_each_line_without_its_prefix():
    diff = "\n".join([
        "@@ -1,2 +1,6 @@",
        " DEBUG=1",
        "-DB_PASSWORD=old-secret-value",
        "+DB_PASSWORD=new-secret-value",
        "+-----BEGIN RSA PRIVATE KEY-----",
        "+MIIEowIBAAKCAQEA",
        "+-----END RSA PRIVATE KEY-----",
    ])
    text, count = masked_diff(diff, "settings.env")
    assert "old-secret-value" not in text and "new-secret-value" not in text and "MIIEowIBAAKCAQEA" not in text
    assert text.split("\n") == [
        "@@ -1,2 +1,6 @@", " DEBUG=1", "-DB_PASSWORD=***", "+DB_PASSWORD=***",
        "+-----BEGIN RSA PRIVATE KEY-----", "+***", "+-----END RSA PRIVATE KEY-----",
    ]
    assert count == 3
    assert masked_diff(text, "settings.env") == (text, 0)  # idempotent


def test_masked_diff_code_mode_keeps_ordinary_code():
    diff = '@@ -1 +1 @@\n-token = request.headers["Authorization"]\n+token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ1234"'
    text, count = masked_diff(diff, "client.py")
    assert text.split("\n")[1] == '-token = request.headers["Authorization"]'
    assert "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ1234" not in text and count >= 1


def test_capped():
    assert capped("a\nb\nc", 2, 100) == "a\nb\n... (1 more lines)"
    assert capped("a\nb", 5, 100) == "a\nb"
    assert capped("x" * 50 + "\ny", 5, 20) == "... (2 more lines)"


_line = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=40)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(" -+"), _line), max_size=12), st.sampled_from(["a.py", "b.env", "c.md"]))
def test_masked_diff_keeps_lines_and_prefixes(rows, path):
    diff = "\n".join(p + t for p, t in rows)
    text, _ = masked_diff(diff, path)
    out = text.split("\n")
    assert len(out) == len(diff.split("\n"))
    assert [r[:1] for r in out] == [r[:1] for r in diff.split("\n")]
    assert masked_diff(text, path) == (text, 0)
