"""Rule verifiers: per domain, and never on volatile values - shown on two real runs of the same commands."""

import json

import pytest

from trajforge.evaluation.verifiers import derive_verifier, verify
from trajforge.evaluation.volatile import mask
from trajforge.sandboxes.base import Task
from trajforge.schemas.records import Action

MCP = {
    "content": json.dumps(
        {"content": [{"type": "text", "text": json.dumps({"id": "row_0007", "done": True})}], "isError": False}
    ),
    "format": "json",
}
TERMINAL = {"content": "total 4\n-rw-r--r-- 1 agent agent 14 hello.txt\n", "exit_code": 0}
WEB = {
    "content": 'URL: http://shop.local/cart\nTitle: Cart\nFocused: none\n- main:\n  - heading "Cart"',
    "format": "aria",
}
# Two runs of the same commands that differ only in volatile values, and the stable facts they share.
COMMANDS = (
    "echo report ready; wc -c notes/todo.txt; mktemp; date; date -Iseconds; date +%s; "
    "cat /proc/sys/kernel/random/uuid; sleep 30 & echo started pid $!; "
    'python3 -c "import time; t = time.perf_counter(); sum(range(10**5)); '
    "print(f'took {time.perf_counter() - t:.6f}s')\""
)


def test_verifiers_per_domain():
    mcp, terminal, web = derive_verifier(MCP, "mcp"), derive_verifier(TERMINAL, "terminal"), derive_verifier(WEB, "web")
    assert verify(mcp, MCP["content"]) and verify(terminal, TERMINAL["content"]) and verify(web, WEB["content"])
    assert not verify(mcp, MCP["content"].replace("true", '\\"yes\\"'))
    assert not verify(mcp, MCP["content"].replace('"isError": false', '"isError": true'))
    assert not verify(terminal, "total 4\n-rw-r--r-- 1 agent agent 99 other.txt\n")
    assert not verify(web, WEB["content"].replace("Title: Cart", "Title: Products"))
    assert not verify(terminal, None)


def test_a_fact_is_not_found_inside_a_volatile_value_of_the_prediction():
    spec = derive_verifier({"content": "report ready\n17 notes/todo.txt\n", "exit_code": 0}, "terminal")
    assert "17" in spec["facts"]
    assert not verify(spec, "report ready\n18 notes/todo.txt\nMon Nov 30 17:17:50 UTC 2026\n")


@pytest.mark.parametrize(
    ("text", "volatile"),
    [
        ("created 2026-11-30T08:00:01.123Z by job", "2026-11-30T08:00:01.123Z"),
        ("-rw-r--r-- 1 agent agent 14 Nov 30 08:01 a.txt", "Nov 30"),
        ("Mon Nov 30 08:01:02 UTC 2026", "2026"),
        ("took 0.003141s", "0.003141s"),
        ("real\t0m0.004s", "0m0.004s"),
        ("/tmp/tmp.Xy12abCD34", "/tmp/tmp.Xy12abCD34"),
        ("started pid 4242", "pid 4242"),
        ("[1] 4242", "[1] 4242"),
        ("id 3f2b6c1e-9a4d-4f7e-8b1a-2c3d4e5f6a7b", "3f2b6c1e-9a4d-4f7e-8b1a-2c3d4e5f6a7b"),
        ("at 1764489661", "1764489661"),
    ],
)
def test_volatile_values_are_masked(text, volatile):
    assert volatile not in mask(text) and "\x00" in mask(text)


def test_stable_values_are_not_masked():
    text = "2 notes/todo.txt\nrow_0007 budget 12000 /srv/data/imports\n"
    assert mask(text) == text


@pytest.mark.slow
def test_two_real_runs_pass_each_others_verifier(terminal):
    task = Task(id="v", instruction="report", files={"notes/todo.txt": "buy milk\nfix bug\n"})
    runs = []
    for _ in range(2):
        terminal.reset(task)
        runs.append({"content": terminal.step(Action(kind="shell", content=COMMANDS)).content, "exit_code": 0})
    first, second = runs[0]["content"], runs[1]["content"]
    assert first != second and first.splitlines()[:2] == ["report ready", "17 notes/todo.txt"]
    for spec, other in ((derive_verifier(runs[0], "terminal"), second), (derive_verifier(runs[1], "terminal"), first)):
        assert verify(spec, other), (spec, other)
        assert {"17", "/todo.txt"} <= set(spec["facts"])  # the stable facts are still checked
        assert not verify(spec, other.replace("17 notes/todo.txt", "18 notes/todo.txt"))
