import json

from tests.builders import EXAMPLES
from trajforge.schemas.formats import ImportOptions, chat


def read(path, **options):
    return list(chat.read(path, ImportOptions(**options)))


def test_example_file_imports_with_weights_and_parts():
    results = read(EXAMPLES / "chat.jsonl", domain="terminal")
    assert [r.ok for r in results] == [True, True, True]
    first = results[0].record
    assert first.task_description == "List the files in the project and count the Python ones."
    assert json.loads(first.action_space)[0]["name"] == "bash"
    assert first.simulation_instruction.startswith("You are a Linux terminal")
    assert [t.loss_weight for t in first.turns] == [None, 1.0, 0.0]
    assert first.turns[1].action.content == "find . -name '*.py' | wc -l"
    assert results[2].record.turns[1].observation.content.startswith("Mount Kilimanjaro")  # ShareGPT


def test_round_trip_is_exact(tmp_path):
    records = [r.record for r in read(EXAMPLES / "chat.jsonl")]
    chat.write(records, tmp_path / "out.jsonl")
    original = [json.loads(line) for line in (EXAMPLES / "chat.jsonl").read_text().splitlines()]
    exported = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert exported[:2] == original[:2]
    # ShareGPT comes back in OpenAI's spelling, with the same conversation.
    sharegpt = [
        {"role": {"human": "user", "gpt": "assistant"}.get(m["from"], m["from"]), "content": m["value"]}
        for m in original[2]["conversations"]
    ]
    assert exported[2]["messages"] == sharegpt
    assert [r.record.model_dump(exclude={"source"}) for r in read(tmp_path / "out.jsonl")] == [
        r.model_dump(exclude={"source"}) for r in records
    ]


def test_structural_problems_have_paths(tmp_path):
    lines = [
        {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
        {"messages": [{"role": "assistant", "content": "a"}]},
        {"messages": [{"role": "tool", "content": "a"}]},
        {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": 3}]},
        {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "weight": "x"}]},
        {"text": "no messages"},
        {"messages": [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "fine"}]},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    results = read(path)
    assert [r.ok for r in results] == [False] * 6 + [True]
    reasons = [r.reasons() for r in results]
    assert "messages[1]: two user messages in a row (each action needs an observation)" in reasons[0]
    assert reasons[1] == ["messages[0]: an assistant message with no user message before it"]
    assert reasons[2] == ["messages[0].role: unsupported role 'tool'"]
    assert reasons[3] == ["messages[1].content: expected text, got int"]
    assert reasons[4] == ["messages[1].weight: expected a number, got 'x'"]
    assert reasons[5] == ["messages: missing (expected `messages` or `conversations`)"]
    assert all(r.raw for r in results[:6])
