"""A Python module's ``if __name__ == "__main__":`` block end to end: the demo at the foot of a
library module repeats the words of what it shows off, so it outranked the code it demonstrates
(rich's ``markup.py``: "where is markup like [bold red] parsed" found the demo first and the parser
20th). ``query --explain`` ranks it below the implementation as an example, says so with the
``role`` factor, and gives it back unreduced to a question that asks for an example."""

from __future__ import annotations

from conftest import explained_hits, rerank_factors, write_placeholder_config

MARKUP = '''import re

TAG = re.compile(r"\\[(/?)([a-z ]*)\\]")


def parse(markup):
    """Parse console markup such as "[bold red]alert[/]": plain text and the style tags that open
    and close around it."""
    position = 0
    for match in TAG.finditer(markup):
        yield markup[position:match.start()], match.group(2)
        position = match.end()


def strip(markup):
    """The plain text of markup, without its tags."""
    return "".join(text for text, _ in parse(markup))


if __name__ == "__main__":  # pragma: no cover
    # a tour of the markup
    MARKUP = ["[bold red]Hello[/bold red] World", "[bold]markup[/bold]"]
    for markup in MARKUP:
        print(list(parse(markup)), strip(markup))
'''

CONSOLE = '''def write(text):
    """Write text to the terminal."""
    print(text)
'''

TESTS = '''from markup import parse


def test_parse():
    assert list(parse("[bold]x[/bold]")) == [("", "bold"), ("x", "/bold")]


if __name__ == "__main__":
    test_parse()
    print("[bold red]markup[/bold red]")
'''


def test_a_main_block_ranks_below_the_code_it_demonstrates(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("init", {"markup.py": MARKUP, "console.py": CONSOLE, "tests/test_markup.py": TESTS})
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0

    question = "where is markup like [bold red] parsed"
    hits = explained_hits(cli, git_repo.root, question, top_k=10)
    titles = [(h["path"], h["sectionTitle"]) for h in hits]
    assert titles[0] == ("markup.py", "function parse")
    demo = hits[titles.index(("markup.py", "module"))]
    assert rerank_factors(demo)["role"] == 0.5
    assert "role" not in rerank_factors(hits[0])
    # a test file's __main__ block is demoted once, as a test
    suite = [h for h in hits if h["path"] == "tests/test_markup.py" and h["sectionTitle"] == "module"]
    assert suite and rerank_factors(suite[0])["role"] == 0.5
    # the first hit is the same whatever the number asked for (the rule is applied to the rows
    # that can be hits, and again while a newly reached one is a __main__ block)
    assert [(h["path"], h["sectionTitle"]) for h in explained_hits(cli, git_repo.root, question, top_k=1)] \
        == titles[:1]

    asked = explained_hits(cli, git_repo.root, "an example of markup like [bold red]", top_k=10)
    demo = next(h for h in asked if (h["path"], h["sectionTitle"]) == ("markup.py", "module"))
    assert "role" not in rerank_factors(demo)
