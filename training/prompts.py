"""World-model prompts: what the model sees when it predicts an observation (system prompt, history, action),
in several system-prompt templates picked deterministically per sample, and the candidate format
`<think>...</think><predicted_observation>...</predicted_observation>`."""

from dataclasses import dataclass

from trajforge.evaluation.judge import Case
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
MAX_HISTORY_CHARS = 24_000


@dataclass(frozen=True)
class Query:
    """One turn to predict, with everything before it."""

    trajectory_id: str
    turn_index: int
    domain: str
    template: int
    messages: tuple[tuple[str, str], ...]  # (role, content): system, then user/assistant pairs, then the action
    reference: str  # the real observation

    @property
    def action(self) -> str:
        return self.messages[-1][1]

    def case(self, prediction: str | None) -> Case:
        """What a judge reads: the earlier (action, observation) pairs, the action, the prediction, the truth."""
        return case_of(self.domain, self.messages, self.reference, prediction)


def case_of(domain: str, messages, reference: str, prediction: str | None) -> Case:
    """A judge's case from chat messages (system, user/assistant pairs, the action): queries and RL rows alike."""
    contents = [m[1] if isinstance(m, tuple) else m["content"] for m in messages]
    history = tuple(zip(contents[1:-1:2], contents[2:-1:2], strict=True))
    return Case(domain, history, contents[-1], reference, prediction)


def pick_template(trajectory_id: str, turn_index: int) -> int:
    return int(content_hash(f"{trajectory_id}:{turn_index}", 8), 16) % len(TEMPLATES)


def build_query(row: dict, turn_index: int, max_history_chars: int = MAX_HISTORY_CHARS, plain: bool = False) -> Query:
    """The query for one turn of a trajectory row; the oldest history goes first when it is too long. `plain`
    keeps the system prompt as CPT renders it (no reasoning template): how a CPT-only model is asked."""
    template = -1 if plain else pick_template(row["trajectory_id"], turn_index)
    system = render_system_prompt(row) if plain else TEMPLATES[template].format(system=render_system_prompt(row))
    history: list[tuple[str, str]] = []
    for turn in row["turns"][:turn_index]:
        history += [("user", action_text(turn["action"])), ("assistant", turn["observation"]["content"])]
    while history and sum(len(c) for _, c in history) > max_history_chars:
        history = history[2:]
    turn = row["turns"][turn_index]
    messages = (("system", system), *history, ("user", action_text(turn["action"])))
    return Query(row["trajectory_id"], turn_index, row["domain"], template, messages, turn["observation"]["content"])


def candidate(reasoning: str, prediction: str) -> str:
    return f"<think>\n{reasoning}\n</think>\n<predicted_observation>\n{prediction}\n</predicted_observation>"
