"""D.7 deterministic tool-result summarisation."""

from __future__ import annotations

import copy
import json

import pytest
from window_builders import SHAPES, call, pair, result_content, user

from ragit.window.budget import resolve_budget
from ragit.window.summaries import one_liner, summarize_tool_results, tool_category

K200 = resolve_budget(window=200_000)  # threshold 3,600 tokens


def shell_output(chars: int = 20_000) -> str:
    line = "test_module.py::test_case PASSED\n"
    body = (line * (chars // len(line) + 1))[: chars - 20]
    return body + "\nexit_code: 1\n".rjust(20, " ")


@pytest.mark.parametrize("shape", SHAPES)
def test_D_7_a_shell_result_one_liner(shape):
    output = shell_output()
    assert len(output) == 20_000
    messages = [user("go"), *pair("c1", output, args={"command": "pytest -q"}, shape=shape), user("next")]
    n, before, after = summarize_tool_results(messages, K200)
    assert n == 1 and after < before
    lines = output.count("\n") + 1
    tokens = len(json.dumps(output, ensure_ascii=False)) // 4
    assert result_content(messages[2]) == (
        f"[run_bash] ran `pytest -q` -> exit 1, {lines:,} lines output [summarized from ~{tokens:,} tokens]"
    )


@pytest.mark.parametrize("shape", SHAPES)
def test_D_7_b_duplicate_names_first_call(shape):
    output = shell_output()
    messages = [user("go"), *pair("c1", output, shape=shape), *pair("c2", output, shape=shape)]
    assert summarize_tool_results(messages, K200)[0] == 2
    second = result_content(messages[4])
    assert second.startswith("[duplicate of tool result c1] [summarized from ~")


@pytest.mark.parametrize("shape", SHAPES)
def test_D_7_c_small_results_and_assistants_untouched(shape):
    long_args = {"path": "a.py", "content": "z" * 2_000, "note": "short"}
    messages = [user("go"), *pair("c1", "tiny", shape=shape), call("c2", "write_file", long_args, shape), ]
    messages.append(pair("c2", "x" * 150, name="write_file", shape=shape)[1])
    messages.append({"role": "assistant", "content": "a" * 50_000})
    before = copy.deepcopy(messages)
    n, _, _ = summarize_tool_results(messages, K200)
    assert n == 1  # only the over-long argument JSON
    assert messages[:3] == before[:3] and messages[4:] == before[4:]
    if shape == "block":
        args = messages[3]["content"][0]["input"]
    else:
        args = json.loads(messages[3]["tool_calls"][0]["function"]["arguments"])  # still valid JSON
    assert args == {"path": "a.py", "content": "z" * 200 + "…[truncated]", "note": "short"}


def test_D_7_templates_by_category():
    text = "line\n" * 9 + "end"
    read = one_liner("read_file", {"path": "src/a.py", "start_line": 40}, text)
    assert read == f"[read_file] read src/a.py from line 40, {len(text)} chars"
    assert one_liner("write_file", {"file_path": "b.md"}, "ok") == "[write_file] wrote b.md, 2 chars"
    grep = one_liner("grep", {"pattern": "TODO", "path": "src"}, '{"matches": 12}')
    assert grep == "[grep] searched `TODO` in src, 12 matches"
    assert one_liner("grep", {"pattern": "x"}, "a\nb") == "[grep] searched `x` in ., ? matches"
    assert one_liner("web_fetch", {"url": "https://e.x/a"}, "abc") == "[web_fetch] looked up https://e.x/a, 3 chars"
    delegated = one_liner("delegate_task", {"task": "t" * 150}, "done")
    assert delegated == f"[delegate_task] delegated `{'t' * 100}`, 4 chars"
    assert one_liner("memory_save", {"action": "save", "target": "notes"}, "ok") == "[memory_save] save notes"
    assert one_liner("custom", {"alpha": "a" * 50, "beta": 2, "gamma": 3}, "r" * 1234) == (
        f"[custom] called with alpha={'a' * 40} beta=2, 1,234 chars"
    )
    assert one_liner("custom", {}, "") == "[custom] called with no arguments, 0 chars"
    shell = one_liner("run_bash", {"cmd": "make"}, {"returncode": 2, "stdout": "x"})
    assert shell.startswith("[run_bash] ran `make` -> exit 2")
    assert "-> exit ?" in one_liner("run_bash", {"command": "ls"}, "no code here")
    assert "exit 3" in one_liner("bash", {"command": "ls"}, "Exit code: 3")


def test_D_7_image_parts_and_categories_map():
    content = [{"type": "text", "text": "shot"}, {"type": "image", "source": {"data": "A" * 10}}, {"type": "image"}]
    assert one_liner("screenshot", {}, content).endswith(", 2 image payload(s) removed")
    assert tool_category("my_shell", {"my_shell": "shell"}) == "shell"
    custom = one_liner("my_shell", {"command": "ls"}, "exit_code: 0", {"my_shell": "shell"})
    assert custom.startswith("[my_shell] ran `ls` -> exit 0")


def test_D_7_pending_use_skill_is_kept():
    body = "skill instructions " * 2_000
    messages = [user("go"), *pair("s1", body, name="use_skill", args={"name": "deploy"})]
    assert summarize_tool_results(messages, K200)[0] == 0
    messages.append({"role": "assistant", "content": "applied"})
    assert summarize_tool_results(messages, K200)[0] == 1
