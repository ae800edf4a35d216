import json

from schemas.formats import ImportOptions, agentworldbench
from tests.conftest import EXAMPLES, make_trajectory


def read(path, **options):
    return list(agentworldbench.read(path, ImportOptions(**options)))


def test_example_lines_import():
    mcp, terminal = (r.record for r in read(EXAMPLES / "agentworldbench.jsonl"))
    assert mcp.domain == "mcp" and terminal.domain == "terminal"
    assert [t.action.name for t in mcp.turns] == ["list_pages", "get_page"]
    assert json.loads(mcp.turns[1].action.content) == {"id": "p1"}
    assert mcp.turns[1].observation.content.startswith('{"id": "p1"')
    assert mcp.simulation_instruction.startswith("You are an MCP server world model")
    # No reference: the history is the trajectory; the pending action is kept, not dropped.
    assert [t.action.kind for t in terminal.turns] == ["message", "shell"]
    assert terminal.turns[1].observation.content == "12 notes.txt"
    kept = json.loads(terminal.metadata)["agentworldbench"]
    assert kept["pending_action"] == {"kind": "shell", "content": "head -n 1 notes.txt"}
    assert kept["turn_idx"] == 3


def test_export_one_line_per_turn_and_back(tmp_path):
    record = make_trajectory(3, domain="terminal", simulation_instruction="Be bash.")
    assert agentworldbench.write([record], tmp_path / "b.jsonl") == 3
    lines = [json.loads(x) for x in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert [line["turn_idx"] for line in lines] == [1, 2, 3]
    assert [len(line["prompt"]) for line in lines] == [0, 1, 2]
    assert lines[2]["current_prompt"] == "### Turn 3\n**Action:**\n```bash\necho step 2\n```"
    assert lines[2]["response"][1] == "**Environment Observation:**\nstep 1\n"
    assert all(line["total_turns"] == 3 and line["task"] == "terminal" for line in lines)
    assert len({line["id"] for line in lines}) == 1
    back = read(tmp_path / "b.jsonl")[2].record
    assert [(t.action.kind, t.action.content, t.observation.content) for t in back.turns] == [
        (t.action.kind, t.action.content, t.observation.content) for t in record.turns
    ]


def test_tool_calls_survive(tmp_path):
    turns = [
        {
            "index": 0,
            "action": {"kind": "tool_call", "name": "get", "content": json.dumps({"k": 1})},
            "observation": {"content": '{"v": 2}', "format": "json"},
        }
    ]
    record = make_trajectory(turns=turns, domain="mcp")
    agentworldbench.write([record], tmp_path / "b.jsonl")
    (back,) = read(tmp_path / "b.jsonl")
    assert back.record.turns[0].action == record.turns[0].action


def test_bad_lines(tmp_path):
    lines = [
        {"task": "mcp", "id": 1, "prompt": ["a", "b"], "response": ["x"], "current_prompt": "c", "system_str": ""},
        {"task": "mcp", "id": 2, "prompt": "a", "response": [], "current_prompt": "c"},
        {"id": 3, "prompt": [], "response": [], "current_prompt": "c"},
    ]
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    reasons = [r.reasons() for r in read(path)]
    assert reasons[0] == ["response: 1 entries for 2 prompts"]
    assert reasons[1] == ["prompt: expected a list of strings"]
    assert reasons[2] == ["task: missing"]
