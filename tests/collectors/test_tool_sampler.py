import json
import random

from trajforge.collectors.policies.tool_sampler import ToolCallSampler

TOOLS = [
    {
        "name": "query",
        "input_schema": {
            "type": "object",
            "required": ["database_id"],
            "properties": {
                "database_id": {"type": "string"},
                "page_size": {"type": "integer", "minimum": 1, "maximum": 5},
                "direction": {"type": "string", "enum": ["asc", "desc"]},
                "filter": {"anyOf": [{"type": "object"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "done": {"type": "boolean"},
            },
        },
    },
    {"name": "get", "input_schema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}},
]


def sample(n: int, invalid_rate: float, seed: int = 0, learn: str | None = None):
    sampler = ToolCallSampler(TOOLS, random.Random(seed), invalid_rate)
    if learn:
        sampler.learn(learn)
    return [sampler.sample() for _ in range(n)]


def test_valid_calls_follow_the_schema():
    for action in sample(200, invalid_rate=0.0):
        args = json.loads(action.content)
        assert action.kind == "tool_call" and action.name in ("query", "get")
        if action.name == "query":
            assert isinstance(args["database_id"], str)
            assert 1 <= args.get("page_size", 1) <= 5 and args.get("direction", "asc") in ("asc", "desc")
            assert all(isinstance(t, str) for t in args.get("tags", []))
        else:
            assert set(args) == {"id"}


def test_ids_seen_in_observations_are_reused():
    observation = json.dumps({"content": [{"type": "text", "text": json.dumps({"results": [{"id": "row_0042"}]})}]})
    ids = [json.loads(a.content).get("id") for a in sample(100, 0.0, learn=observation) if a.name == "get"]
    assert "row_0042" in ids and "text" not in ids


def test_invalid_calls_of_every_kind():
    actions = sample(400, invalid_rate=1.0, seed=3)
    names = {a.name for a in actions}
    assert {"query_v2", "get_v2"} & names  # a tool that does not exist
    args = [json.loads(a.content) for a in actions if a.name == "get"]
    assert any("id" not in a for a in args)  # a missing required argument
    assert any("unexpected_argument" in a for a in args)
    assert any(isinstance(a.get("id"), list) for a in args)  # a wrong type


def test_browser_refs_come_from_the_snapshot():
    sampler = ToolCallSampler(
        [
            {
                "name": "click",
                "input_schema": {"type": "object", "required": ["ref"], "properties": {"ref": {"type": "string"}}},
            }
        ],
        random.Random(1),
        0.0,
        kind="browser",
    )
    sampler.learn('- button "Save" [ref=e7]\n- link "Home" [ref=e9]:\n  - /url: /home')
    refs = {json.loads(sampler.sample().content)["ref"] for _ in range(30)}
    assert refs == {"e7", "e9"}
