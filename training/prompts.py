"""The prompts trajforge's SFT generators send, built from a turn to predict (`evaluation.turns.PredictionTurn`,
which also frames its system prompt): the turn's chat messages, with the real observation shown as a hint when a
model is to rationalize toward it; and the answer they write, `<think>...</think><predicted_observation>...
</predicted_observation>`."""

from trajforge.evaluation.turns import PredictionTurn

HINT = (
    "\n\n(Hint for writing your reasoning: the environment's real observation follows. Reason toward it from the "
    "history and the action without quoting it in your reasoning.)\n"
    "<real_observation>\n{reference}\n</real_observation>"
)


def chat_messages(turn: PredictionTurn, hint: bool) -> list[dict]:
    messages = [{"role": role, "content": content} for role, content in turn.messages]
    if hint:
        messages[-1]["content"] += HINT.format(reference=turn.reference)
    return messages


def candidate(reasoning: str, prediction: str) -> str:
    return f"<think>\n{reasoning}\n</think>\n<predicted_observation>\n{prediction}\n</predicted_observation>"
