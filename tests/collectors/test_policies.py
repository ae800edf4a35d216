import json

import httpx
import pytest

from trajforge.collectors.policies.base import is_unparseable
from trajforge.collectors.policies.explorer import ExplorerPolicy
from trajforge.collectors.policies.llm import LLMAgentPolicy, ModelUnreachable
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.sandboxes.base import EpisodeEnded, Task
from trajforge.schemas.records import Action, Observation, Outcome

TASK = Task(
    id="t",
    instruction="Count the lines of notes.txt",
    files={"notes.txt": "a\nb\n", "src/app.py": ""},
    actions=(Action(kind="shell", content="ls"), Action(kind="shell", content="wc -l notes.txt")),
)
INITIAL = Observation(content="notes.txt src")


def test_scripted_replays_in_order():
    policy = ScriptedPolicy()
    policy.start(TASK, [], INITIAL, seed=1)
    assert [policy.act(None).content, policy.act(INITIAL).content, policy.act(INITIAL)] == [
        "ls",
        "wc -l notes.txt",
        None,
    ]


def run_explorer(seed: int) -> list[str]:
    policy = ExplorerPolicy(steps=30)
    policy.start(TASK, [], INITIAL, seed)
    commands, last = [], None
    while (action := policy.act(last)) is not None:
        commands.append(action.content)
        last = Observation(content="found.log other.csv" if action.content.startswith("ls") else "")
    return commands


def test_explorer_is_seeded_varied_and_grounded():
    first, again, other = run_explorer(7), run_explorer(7), run_explorer(8)
    assert first == again and first != other
    assert len(first) == 30 and len(set(first)) > 15
    text = " ".join(first)
    assert "notes.txt" in text or "src" in text
    assert any(c.startswith(("cat missing", "cd missing", "ls --no-such-flag", "grep")) for c in first + other)


class FakeChat:
    """An OpenAI-compatible endpoint that answers from a script and records the requests."""

    def __init__(self, replies):
        self.replies, self.requests = list(replies), []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        reply = self.replies.pop(0)
        if isinstance(reply, int):
            return httpx.Response(reply, text="overloaded")
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", **reply}}]})


def tool_call(name, arguments, call_id="c1"):
    return {
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }


def test_llm_agent_speaks_openai_tool_calling(monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    chat = FakeChat(
        [
            503,
            tool_call("shell", {"command": "wc -l notes.txt"}),
            {"content": "Let me check:\n```bash\ncat notes.txt\n```"},
            {"content": "There are 2 lines."},
        ]
    )
    policy = LLMAgentPolicy("http://model/v1", "tiny", transport=httpx.MockTransport(chat))
    policy.start(TASK, [{"name": "shell", "description": "run", "input_schema": {"type": "object"}}], INITIAL, seed=3)
    assert policy.act(None) == Action(kind="shell", content="wc -l notes.txt")
    assert policy.act(Observation(content="2 notes.txt")) == Action(kind="shell", content="cat notes.txt")
    assert policy.act(Observation(content="a\nb\n")) is None
    first = chat.requests[0]
    assert first["model"] == "tiny" and first["tools"][0]["function"]["name"] == "shell"
    assert "Count the lines" in first["messages"][0]["content"]
    assert chat.requests[2]["messages"][-2:][0]["tool_calls"][0]["id"] == "c1"
    assert chat.requests[2]["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "2 notes.txt"}


def test_llm_endpoint_failure_ends_the_episode(monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    policy = LLMAgentPolicy("http://model/v1", "tiny", attempts=2, transport=httpx.MockTransport(FakeChat([500, 500])))
    policy.start(TASK, [], INITIAL, seed=0)
    with pytest.raises(ModelUnreachable, match="HTTP 500"):
        policy.act(None)


def test_llm_text_fallback_reads_every_action_kind_with_the_codec():
    from trajforge.sandboxes.browser import action_space

    chat = FakeChat(
        [
            {"content": 'I will click.\n<tool_call>\n{"name": "click", "arguments": {"ref": "e2"}}\n</tool_call>'},
            {"content": '<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>'},
            {"content": '```keys\n{"keystrokes": "C-c"}\n```'},
            {"content": "Done: the cart holds 2 items."},
        ]
    )
    policy = LLMAgentPolicy("http://model/v1", "tiny", transport=httpx.MockTransport(chat))
    policy.start(TASK, action_space(), INITIAL, seed=0)
    assert policy.act(None) == Action(kind="browser", name="click", content='{"ref": "e2"}')
    assert policy.act(INITIAL) == Action(kind="shell", content="ls")  # as the native shell tool call would be
    assert policy.act(INITIAL) == Action(kind="keystrokes", content='{"keystrokes": "C-c"}')
    assert policy.act(INITIAL) is None


def test_llm_unparseable_answer_is_the_agents_error_not_a_crash():
    chat = FakeChat([{"content": '<tool_call>{"name": "read", "arguments": {"path": </tool_call>'}])
    policy = LLMAgentPolicy("http://model/v1", "tiny", transport=httpx.MockTransport(chat))
    policy.start(TASK, [], INITIAL, seed=0)
    with pytest.raises(EpisodeEnded, match="unparseable answer: the <tool_call> does not hold valid JSON") as ended:
        policy.act(None)
    assert ended.value.status == "agent_error"
    assert is_unparseable(Outcome(status="agent_error", error=ended.value.reason))
    assert not is_unparseable(Outcome(status="agent_error", error="the model endpoint failed: 503"))
    assert not is_unparseable(Outcome(status="timeout", error=ended.value.reason))
