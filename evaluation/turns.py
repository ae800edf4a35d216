"""A turn to predict, the one type that curation, RL prompts, eval and every judge read: what the model is shown (a
system prompt, the earlier turns, the action) and what its answer is compared with (the real observation). Here too
is how a corpus row's turn is asked: the plain system prompt (as CPT renders it) or one of the world-model
templates, picked deterministically per turn, that ask for the `<think>...</think><predicted_observation>...
</predicted_observation>` answer (evaluation/extraction.py reads it)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from trajforge.schemas.hashing import content_hash
from trajforge.schemas.system_prompt import render_system_prompt
from trajforge.schemas.turn_text import action_text

TEMPLATES = (
    "You are a world model of the environment described below. Given the history of actions and observations "
    "and a new action, think step by step inside <think></think>, then write exactly what the environment "
    "returns inside <predicted_observation></predicted_observation>.\n\n{system}",
    "{system}\n\nSimulate this environment faithfully. Reason in <think>...</think>, then give the environment's "
    "exact output in <predicted_observation>...</predicted_observation>.",
    "Role: environment simulator.\n{system}\nFor each action: <think>your reasoning</think> then "
    "<predicted_observation>the observation, verbatim</predicted_observation>.",
    "# Environment\n{system}\n\n# Your job\nPredict the next observation. Format: <think>...</think>"
    "<predicted_observation>...</predicted_observation>",
)
PLAIN = -1  # the template index of a turn asked with the plain system prompt
MAX_HISTORY_CHARS = 24_000


@dataclass(frozen=True)
class PredictionTurn:
    id: str  # unique in a run: "trajectory_id:turn_index" for a corpus turn, "file:line N" for a benchmark line
    domain: str
    system: str | None  # the system prompt as the model is shown it; None: no system message
    history: tuple[tuple[str, str], ...]  # (action, observation) of every earlier turn shown, oldest first
    action: str
    reference: str  # the real observation
    observation: Mapping = field(default_factory=dict)  # the real observation's record (format, exit code), if known
    trajectory_id: str = ""  # its episode: a corpus row's id, a benchmark line's "task:id"; "" when unknown
    turn_index: int = 0
    template: int = PLAIN  # which of TEMPLATES framed the system prompt

    @property
    def messages(self) -> tuple[tuple[str, str], ...]:
        """(role, content) as the model is asked, AgentWorldBench's layout too: the system prompt, one
        user/assistant pair per earlier turn (action, observation), then the action."""
        system = (("system", self.system),) if self.system is not None else ()
        pairs = tuple(m for action, observation in self.history for m in (("user", action), ("assistant", observation)))
        return (*system, *pairs, ("user", self.action))

    def history_text(self) -> str:
        """The history as the benchmark's judge reads it: each action and its observation, a blank line apart."""
        return "".join(f"{action}\n{observation}\n\n" for action, observation in self.history)


def pick_template(trajectory_id: str, turn_index: int) -> int:
    return int(content_hash(f"{trajectory_id}:{turn_index}", 8), 16) % len(TEMPLATES)


def corpus_turn(
    row: Mapping, turn_index: int, plain: bool = False, max_history_chars: float = MAX_HISTORY_CHARS
) -> PredictionTurn:
    """One turn of a trajectory row, with the turns before it; the oldest history goes first when it is too long.
    `plain` keeps the system prompt as CPT renders it (no template): how a CPT-only model is asked."""
    trajectory_id = row["trajectory_id"]
    template = PLAIN if plain else pick_template(trajectory_id, turn_index)
    system = render_system_prompt(row)
    history = tuple((action_text(t["action"]), t["observation"]["content"]) for t in row["turns"][:turn_index])
    while history and sum(len(a) + len(o) for a, o in history) > max_history_chars:
        history = history[1:]
    turn = row["turns"][turn_index]
    return PredictionTurn(
        id=f"{trajectory_id}:{turn_index}",
        domain=row["domain"],
        system=system if plain else TEMPLATES[template].format(system=system),
        history=history,
        action=action_text(turn["action"]),
        reference=turn["observation"]["content"],
        observation=turn["observation"],
        trajectory_id=trajectory_id,
        turn_index=turn_index,
        template=template,
    )


def turn_of_messages(domain: str, messages: Sequence, reference: str) -> PredictionTurn:
    """The turn that chat messages ask (a system message, user/assistant pairs, the action), as an RL row keeps
    it: `PredictionTurn.messages` read back. Messages are (role, content) pairs or {"role", "content"} dicts."""
    pairs = [tuple(m) if isinstance(m, tuple) else (m["role"], m["content"]) for m in messages]
    system = pairs[0][1] if pairs and pairs[0][0] == "system" else None
    contents = [content for _, content in pairs[1 if system is not None else 0 :]]
    history = tuple(zip(contents[0:-1:2], contents[1:-1:2], strict=True))
    return PredictionTurn("", domain, system, history, contents[-1], reference)
