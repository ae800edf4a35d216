"""The one way a model's answer becomes a predicted observation, for curation, rewards and evaluation alike:
drop `<think>...</think>` (and a reasoning block never closed), take the last `<predicted_observation>` block
(one never closed runs to the end of the answer), else the whole answer."""

import re
from dataclasses import dataclass

OPEN, CLOSE = "<predicted_observation>", "</predicted_observation>"
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_UNCLOSED_THINK = re.compile(r"<think>.*\Z", re.DOTALL)


@dataclass(frozen=True)
class Prediction:
    text: str
    tagged: bool  # the answer had a <predicted_observation> block: the format SFT and RL teach

    @property
    def empty(self) -> bool:
        return not self.text.strip()


def _trim_markup_newlines(text: str) -> str:
    """The format puts the prediction on lines of its own: one newline each side is markup, not output."""
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


def extract_prediction(answer: str) -> Prediction:
    visible = _UNCLOSED_THINK.sub("", _THINK.sub("", answer))
    start = visible.rfind(OPEN)
    if start < 0:
        return Prediction(visible.strip(), tagged=False)
    body = visible[start + len(OPEN) :]
    end = body.find(CLOSE)
    return Prediction(_trim_markup_newlines(body if end < 0 else body[:end]), tagged=True)
