"""OpenAI tool-calling chats, as SWE-rebench's OpenHands trajectories hold them on the Hub.
`schemas/examples/chat_tools_handwritten.jsonl` is hand-written in that set's row layout (its dataset card's columns
and message fields, every message with all five as its parquet struct has them): no file here comes from the
set itself, which is not reachable from this machine."""

import json

import pyarrow as pa
import pyarrow.parquet as pq

from tests.builders import EXAMPLES
from trajforge.schemas.formats import ImportOptions, chat_tools
from trajforge.schemas.sources import read_records
from trajforge.schemas.splits import task_key

SAMPLE = EXAMPLES / "chat_tools_handwritten.jsonl"


def read(path, **options):
    return list(chat_tools.read(path, ImportOptions(**options)))


def kept(record) -> dict:
    return json.loads(record.metadata)["chat_tools"]


def test_each_tool_call_with_the_tool_message_answering_it_is_a_turn():
    first, second = (r.record for r in read(SAMPLE))
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    calls = [c for m in rows[0]["trajectory"] if m["tool_calls"] for c in m["tool_calls"]]
    assert [(t.action.kind, t.action.name) for t in first.turns] == [
        ("tool_call", c["function"]["name"]) for c in calls[:5]
    ]
    assert [json.loads(t.action.content) for t in first.turns] == [
        json.loads(c["function"]["arguments"]) for c in calls[:5]
    ]
    tool_messages = [m["content"] for m in rows[0]["trajectory"] if m["role"] == "tool"]
    assert [t.observation.content for t in first.turns] == tool_messages  # the parallel calls by their ids
    assert first.task_description.endswith("Fix calc.add so that the tests pass.")
    assert [t["function"]["name"] for t in json.loads(first.action_space)] == [
        "execute_bash",
        "str_replace_editor",
        "finish",
    ]
    assert (first.domain, first.environment.name, first.outcome.status, second.outcome.status) == (
        "swe",
        "calc/calc",
        "success",
        "failure",
    )
    ids = kept(first)
    assert ids["turn_tool_call_ids"] == ["call_1", "call_2", "call_3", "call_4", "call_5"]
    assert [c["name"] for c in ids["unanswered_calls"]] == ["finish"]
    assert ids["thoughts"][1] == {"message": "trajectory[7]", "text": "The bug is the minus sign."}
    assert ids["agent_system_prompt"].startswith("You are OpenHands agent")
    assert kept(second)["user_messages"] == ["Please do not change the tests."]
    assert kept(second)["answers"][0]["text"].startswith("I could not run the tests")
    assert task_key(first.model_dump()) == "chat-tools:calc__calc-1"


def test_the_hubs_parquet_rows_are_the_same_runs(tmp_path):
    """The sample's rows as the Hub holds them: parquet, the messages and tools as structs (each field of any row
    in every row, null where the row lacks it)."""
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "train-00000-of-00001.parquet")
    from_rows = [r.record for r in read_records([tmp_path], "chat-tools")]
    assert [r.model_dump(exclude={"source"}) for r in from_rows] == [
        r.record.model_dump(exclude={"source"}) for r in read(SAMPLE)
    ]


def test_what_cannot_be_read_rejects_the_run_with_the_messages_path(tmp_path):
    row = json.loads(SAMPLE.read_text().splitlines()[0])
    broken = {
        "orphan": [*row["trajectory"][:3], {"role": "tool", "content": "x", "tool_call_id": "call_9"}],
        "arguments": [
            *row["trajectory"][:2],
            {
                **row["trajectory"][2],
                "tool_calls": [{"id": "c", "function": {"name": "execute_bash", "arguments": "ls"}}],
            },
        ],  # fmt: skip
        "role": [*row["trajectory"][:2], {"role": "observer", "content": "x"}],
        "noturn": row["trajectory"][:2],
    }
    lines = [*({"trajectory": t} for t in broken.values()), {"conversation": []}]
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    reasons = [r.reasons() for r in read(tmp_path / "bad.jsonl")]
    assert reasons == [
        ["trajectory[3].tool_call_id: answers no call ('call_9')"],
        ["trajectory[2].tool_calls[0].function.arguments: not a JSON object"],
        ["trajectory[2].role: unsupported role 'observer'"],
        ["trajectory: no tool call answered by a tool message: no turn"],
        ["messages: missing (expected `messages` or `trajectory`: a list of messages)"],
    ]
