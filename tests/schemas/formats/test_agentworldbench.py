import json

import pytest

from tests.builders import EXAMPLES, make_trajectory
from trajforge.schemas.formats import ImportOptions, agentworldbench

BENCHMARK_TASKS = {"terminal", "swe", "mcp", "search", "web", "os", "android"}


def read(path, **options):
    return list(agentworldbench.read(path, ImportOptions(**options)))


def benchmark_reader(folder):
    """Written from the format's description, not from the exporter: what the published evaluator does
    with a folder - every *_test.jsonl, each line's action prompt[turn_idx-1] and truth response[turn_idx-1]."""
    seen = []
    for path in sorted(folder.glob("*_test.jsonl")):
        for text in path.read_text().splitlines():
            line = json.loads(text)
            assert isinstance(line["prompt"], list) and all(isinstance(p, str) for p in line["prompt"])
            assert isinstance(line["response"], list) and all(isinstance(r, str) for r in line["response"])
            assert isinstance(line["system_str"], str) and isinstance(line["current_prompt"], str)
            assert isinstance(line["turn_idx"], int) and isinstance(line["total_turns"], int) and "id" in line
            assert line["task"].split("/")[-1] in BENCHMARK_TASKS and path.name == f"{line['task']}_test.jsonl"
            t = line["turn_idx"]
            assert 1 <= t <= line["total_turns"] and len(line["prompt"]) == len(line["response"]) == t
            action, truth = line["prompt"][t - 1], line["response"][t - 1]
            assert action == line["current_prompt"]
            assert truth.startswith("**Environment Observation:**\n")
            seen.append((line["task"], line["id"], t, action, truth.removeprefix("**Environment Observation:**\n")))
    return seen


def test_example_lines_import_with_their_ground_truth():
    mcp, terminal = (r.record for r in read(EXAMPLES / "agentworldbench.jsonl"))
    assert mcp.domain == "mcp" and terminal.domain == "terminal"
    assert [t.action.name for t in mcp.turns] == ["list_pages", "get_page"]
    assert json.loads(mcp.turns[1].action.content) == {"id": "p1"}
    assert mcp.turns[1].observation.content.startswith('{"id": "p1"')  # the line's ground truth
    assert mcp.simulation_instruction.startswith("You are an MCP server world model")
    assert [t.action.kind for t in terminal.turns] == ["message", "shell", "shell"]
    assert terminal.turns[2].observation.content == "# Notes"
    assert "pending_action" not in terminal.metadata


def test_export_reads_as_the_benchmark_reads_it(tmp_path):
    records = [
        make_trajectory(3, domain="terminal", task_description="Print the steps."),
        make_trajectory(2, domain="mcp"),
        make_trajectory(2, domain="other"),
    ]
    summary = agentworldbench.export_folder(records, tmp_path)
    assert dict(summary.lines) == {"terminal": 3, "mcp": 2} and dict(summary.skipped) == {"other": 1}
    seen = benchmark_reader(tmp_path)
    assert len(seen) == 5
    terminal = [s for s in seen if s[0] == "terminal"]
    assert [(s[2], s[3], s[4]) for s in terminal] == [
        (t.index + 1, f"### Turn {t.index + 1}\n**Action:**\n```bash\n{t.action.content}\n```", t.observation.content)
        for t in records[0].turns
    ]
    line = json.loads((tmp_path / "terminal_test.jsonl").read_text().splitlines()[0])
    assert line["system_str"].startswith("You are a world model of a Linux terminal")
    assert "The agent's task: Print the steps." in line["system_str"]  # part of the initial state


def test_round_trip_gives_the_same_lines(tmp_path):
    agentworldbench.export_folder(
        [make_trajectory(4, domain="terminal"), make_trajectory(2, domain="mcp")], tmp_path / "a"
    )
    back = [r.record for f in sorted((tmp_path / "a").glob("*.jsonl")) for r in read(f)]
    assert [len(r.turns) for r in back] == [2, 4]  # the lines of one trajectory merge into it
    agentworldbench.export_folder(back, tmp_path / "b")
    for name in ("terminal_test.jsonl", "mcp_test.jsonl"):
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()
    again = [r.record for f in sorted((tmp_path / "b").glob("*.jsonl")) for r in read(f)]
    assert [r.trajectory_id for r in again] == [r.trajectory_id for r in back]


def test_imported_published_lines_round_trip(tmp_path):
    (record,) = [r.record for r in read(EXAMPLES / "agentworldbench.jsonl")][1:]
    agentworldbench.export_folder([record], tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "terminal_test.jsonl").read_text().splitlines()]
    original = json.loads((EXAMPLES / "agentworldbench.jsonl").read_text().splitlines()[1])
    assert lines[-1] == original


def test_tool_calls_survive(tmp_path):
    turns = [
        {
            "index": 0,
            "action": {"kind": "tool_call", "name": "get", "content": json.dumps({"k": 1})},
            "observation": {"content": '{"v": 2}', "format": "json"},
        }
    ]
    record = make_trajectory(turns=turns, domain="mcp")
    agentworldbench.write([record], tmp_path)
    (back,) = read(tmp_path / "mcp_test.jsonl")
    assert back.record.turns[0].action == record.turns[0].action


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            {"prompt": ["a"], "response": ["x"], "turn_idx": 2},
            "turn_idx: 2 is beyond its lists (1 prompts, 1 responses)",
        ),
        ({"prompt": "a", "response": ["x"], "turn_idx": 1}, "prompt: expected a list, got str"),
        ({"prompt": ["a", 3], "response": ["x", "y"], "turn_idx": 1}, "prompt: expected a list of strings"),
        ({"prompt": ["a"], "response": ["x"], "turn_idx": 0}, "turn_idx: expected an integer >= 1, got 0"),
    ],
)
def test_bad_lines_are_named_by_file_and_line(tmp_path, line, reason):
    path = tmp_path / "b_test.jsonl"
    good = {"task": "mcp", "id": 1, "prompt": ["a"], "response": ["x"], "current_prompt": "a", "turn_idx": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"task": "mcp", "id": 2, **line}) + "\n")
    results = read(path)
    assert results[0].locator == "line 2" and not results[0].ok and reason in "; ".join(results[0].reasons())
    assert results[1].ok  # the good line is kept
    (bad,) = [r for r in agentworldbench.read_lines(tmp_path) if r.line is None]
    assert bad.where == f"{path}:line 2" and reason in str(bad.problems[0])
