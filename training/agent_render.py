"""A trajectory in the AGENT role: the model writes the actions and the environment answers. The same module
builds the prompt a checkpoint acts on, so acting sees exactly the layout training used.

The conversation (`agent_messages`), in the tokenizer's chat format (training/chat_format.py: the model's own
template, or trajforge's markers for the tiny default):

    system     AGENT_PROMPT: the agent's instructions and "# Actions" (each tool of the action space with how to
               write it: a ```bash block, a ```keys block, or a <tool_call>)
    user       the initial state, as the environment showed it (NO_INITIAL_STATE when it showed nothing), then
               "# Task" and the task instruction: the task sits next to the first action, where a small model
               attends most easily (the names it must copy are in it), as agent frameworks put the task in the
               first user message
    assistant  the action of turn 0, written with the codec (`trajforge.schemas.actions.write_action`)
    user       the observation of turn 0, its content as the environment answered
    ...        one assistant/user pair per turn
    assistant  DONE_ANSWER, in training only, when the agent itself ended the episode (outcome success or failure:
               the check ran because the policy stopped), so a model learns to stop when it is done

Every observation is a `user` message (the markers have no `tool` role; one layout for every template).

The loss (`render_agent_row`): every assistant message's characters and the end-of-turn token that closes it
(<|end|>, <|im_end|>, ...: the model learns where an action stops, and generation stops at it); the system
prompt, the observations and the template's own text are context only. Which rows teach the agent at all:
`teaches_agent`, the trajectories whose outcome is success (rejection sampling by outcome; agent-sft counts what
it drops, training/agent_data.py).

Acting (the checkpoint policy), with the tokenizer the checkpoint was trained with:

    messages = agent_messages(task.instruction, action_space, history, initial.content)
    ids = agent_prompt_ids(tokenizer, messages)  # ends with the opening of the assistant message
    ... generate until agent_stop_id(tokenizer), parse the text with parse_action ...
    after the observation: ids += generated ids (ending with the stop id) + agent_observation_ids(tokenizer, m)

where `m` is `agent_messages(...)` with the new (action, observation) pair in `history`. The ids then equal
`agent_prompt_ids(tokenizer, m)`, except that the action's own ids are those generated, not re-tokenized. Tokens
are made as training makes them (training/labels.py): the template's text with special-token matching, contents
as plain text, so an observation holding "<|im_end|>" cannot end a turn.

A tokenizer that cannot act (no chat template and no trajforge markers, or a template whose end of turn is not a
special token) is an AgentFormatError that names it, raised by each of these functions.
"""

import json
from collections.abc import Callable, Mapping, Sequence

from jinja2 import TemplateError

from trajforge.schemas.actions import TOOL_CLOSE, TOOL_OPEN, write_action
from trajforge.schemas.records import Action, Trajectory
from trajforge.training.chat_format import MARKERS, ChatFormat, Message, RenderedDocument
from trajforge.training.labels import label_document
from trajforge.training.render import MaskMode, render_row

ROLES = ("world", "agent", "both")  # --role: what a trajectory teaches
AGENT_PROMPT = (
    "Solve the task in the environment. Reply with one action; its result comes back as the next message. "
    "When the task is done, reply with a short answer and no action.\n\n# Actions\n{actions}"
)
TASK_MESSAGE = "{initial_state}\n\n# Task\n{instruction}"
NO_INITIAL_STATE = "(the environment shows nothing yet)"
DONE_ANSWER = "Done."
AGENT_ENDED = ("success", "failure")  # outcomes recorded after the policy itself stopped
# Tools whose action is written as a fenced block (the kinds the terminal records), by tool name.
FENCED_TOOLS = {"shell": ("shell", "COMMAND"), "keystrokes": ("keystrokes", '{"keystrokes": "ls\\n", "duration": 0.5}')}

History = Sequence[tuple[Action, str]]  # per turn: the action taken, the observation's content


class AgentFormatError(ValueError):
    """The tokenizer has no layout to act in."""


# --- the conversation ------------------------------------------------------------------------------------------


def action_space_text(action_space: str | Sequence[Mapping]) -> str:
    """Each tool (a JSON string as a trajectory stores it, or the list the environment gives) with its description,
    its arguments' schema and how an answer writes it."""
    tools = json.loads(action_space) if isinstance(action_space, str) else action_space
    lines = []
    for tool in tools or ():
        name = tool.get("name") or ""
        head = f"## {name}\n{tool.get('description') or ''}".rstrip()
        if name in FENCED_TOOLS:
            kind, example = FENCED_TOOLS[name]
            lines.append(f"{head}\nWrite it as:\n{write_action(Action(kind=kind, content=example))}")
            continue
        schema = json.dumps(tool.get("input_schema") or {"type": "object"}, ensure_ascii=False, sort_keys=True)
        call = f'{TOOL_OPEN}\n{{"name": {json.dumps(name, ensure_ascii=False)}, "arguments": {{...}}}}\n{TOOL_CLOSE}'
        lines.append(f"{head}\nArguments: {schema}\nWrite it as:\n{call}")
    return "\n\n".join(lines) or "(no tools: answer in text)"


def agent_messages(
    instruction: str, action_space: str | Sequence[Mapping], history: History = (), initial_state: str = ""
) -> list[dict]:
    """The conversation an agent acts in (module docstring), as {role, content} dicts. `action_space` is the
    environment's tool list, or its JSON text; `history` the (action, observation content) pairs so far."""
    prompt = AGENT_PROMPT.format(actions=action_space_text(action_space))
    task = TASK_MESSAGE.format(initial_state=(initial_state or NO_INITIAL_STATE).rstrip("\n"), instruction=instruction)
    messages = [{"role": "system", "content": prompt}, {"role": "user", "content": task}]
    for action, observation in history:
        messages.append({"role": "assistant", "content": write_action(action)})
        messages.append({"role": "user", "content": observation})
    return messages


def teaches_agent(row: Mapping) -> bool:
    """Whether a trajectory's actions are worth imitating: its outcome is success."""
    return (row.get("outcome") or {}).get("status") == "success"


def _row_history(row: Mapping) -> list[tuple[Action, str]]:
    return [(Action.model_validate(turn["action"]), turn["observation"]["content"]) for turn in row["turns"]]


def agent_conversation(row: Mapping | Trajectory) -> list[Message]:
    """A trajectory (a record, or a row of one: raw or CPT shards) as agent messages, the actions in the loss."""
    if isinstance(row, Trajectory):
        row = row.model_dump()
    messages = agent_messages(row["task_description"], row["action_space"], _row_history(row), row["initial_state"])
    if (row.get("outcome") or {}).get("status") in AGENT_ENDED:
        messages.append({"role": "assistant", "content": DONE_ANSWER})
    return [_in_loss(m["content"]) if m["role"] == "assistant" else Message(m["role"], m["content"]) for m in messages]


def _in_loss(content: str) -> Message:
    return Message("assistant", content, ((0, len(content)),), end_in_loss=True)


def render_agent_row(
    row: Mapping | Trajectory, mask_mode: MaskMode = "masked", chat: ChatFormat = MARKERS
) -> RenderedDocument:
    """The trajectory in the agent role as one document. `mask_mode` is accepted for symmetry with render_row: the
    actions (and their ends of turn) are always the only thing learned."""
    return chat.document(agent_conversation(row))


Render = Callable[..., list[RenderedDocument]]


def role_render(role: str, world: Callable[..., RenderedDocument] = render_row) -> Render:
    """What a row teaches under --role: `world` its world-model document (render_row, or render_sft_row), `agent`
    its agent document when `teaches_agent`, `both` the two. The render returns a list of documents."""
    if role not in ROLES:
        raise ValueError(f"--role {role!r}: expected one of {', '.join(ROLES)}")

    def render(row: Mapping, mask_mode: MaskMode = "masked", chat: ChatFormat = MARKERS) -> list[RenderedDocument]:
        documents = [] if role == "agent" else [world(row, mask_mode, chat)]
        if role != "world" and teaches_agent(row):
            documents.append(render_agent_row(row, mask_mode, chat))
        return documents

    return render


# --- acting ----------------------------------------------------------------------------------------------------


def agent_chat(tokenizer) -> ChatFormat:
    """The tokenizer's chat format, or an AgentFormatError saying why it cannot act."""
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    try:
        return ChatFormat.of(tokenizer)
    except (ValueError, TemplateError) as exc:  # TemplateError: the template refuses a role (raise_exception)
        raise AgentFormatError(
            f"{name} cannot act as an agent: {exc}. It needs a chat template whose end of turn is a special token, "
            "or trajforge's markers (training.tokenizer.load_tokenizer adds them to a tokenizer without a template)"
        ) from exc


def agent_prompt_ids(tokenizer, messages: Sequence[Mapping]) -> list[int]:
    """The token ids of `messages` (agent_messages) followed by the opening of an assistant message: what the model
    continues with its next action."""
    chat = agent_chat(tokenizer)
    return label_document(chat.prompt(Message.all_of(messages)), tokenizer).input_ids.tolist()


def agent_observation_ids(tokenizer, messages: Sequence[Mapping]) -> list[int]:
    """The ids that follow the end-of-turn token of the last action: the observation's message (the last one of
    `messages`, after that action's) and the opening of the next assistant message."""
    if len(messages) < 2 or messages[-2]["role"] != "assistant" or messages[-1]["role"] != "user":
        raise ValueError("agent_observation_ids needs messages ending with an action and its observation")
    chat = agent_chat(tokenizer)
    conversation = [*Message.all_of(messages[:-2]), _in_loss(messages[-2]["content"]), *Message.all_of(messages[-1:])]
    document = chat.prompt(conversation)
    end_of_action = int(document.loss_flags.nonzero()[0][-1]) + 1  # the loss ends with the action's end of turn
    return label_document(document.after(end_of_action), tokenizer).input_ids.tolist()


def agent_stop_id(tokenizer) -> int:
    """The end-of-turn token that closes an action: generation stops at it."""
    return tokenizer.convert_tokens_to_ids(agent_chat(tokenizer).end_of_turn)
