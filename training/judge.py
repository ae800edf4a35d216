"""Judging a predicted observation on the paper's five dimensions (format, factuality, consistency, realism,
quality), each 1 to 5, against the real observation: the embedded reference-based judge (deterministic, no
model), and the parser of an LLM judge's answer. Rewards and evaluation read the same scores."""

import difflib
import json
import re
from dataclasses import asdict, dataclass

DIMENSIONS = ("format", "factuality", "consistency", "realism", "quality")
PREDICTION = re.compile(r"<predicted_observation>(.*?)</predicted_observation>", re.DOTALL)
THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
# Deterministic facts: numbers, paths, URLs, ids like row_0007 or a1b2c3d4, quoted strings.
FACT = re.compile(r"""https?://\S+|(?:/[\w.-]+)+/?|\b[\w-]*\d[\w-]*\b|"[^"\n]{1,80}"|'[^'\n]{1,80}'""")


@dataclass(frozen=True)
class Scores:
    format: float
    factuality: float
    consistency: float
    realism: float
    quality: float

    @property
    def mean(self) -> float:
        return sum(asdict(self).values()) / len(DIMENSIONS)

    def normalized(self) -> dict[str, float]:
        """AgentWorldBench's 0-100 scale: (raw - 1) / 4 x 100."""
        return {k: (v - 1) / 4 * 100 for k, v in asdict(self).items()}

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def extract_prediction(candidate: str) -> str | None:
    """Only the text inside <predicted_observation> reaches a judge: reasoning earns nothing."""
    match = PREDICTION.search(candidate)
    if match is None:
        return None
    text = match.group(1)  # the format puts the prediction on lines of its own: one newline each side is markup
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


def _scale(x: float) -> float:
    """[0, 1] -> [1, 5]."""
    return round(1 + 4 * min(1.0, max(0.0, x)), 3)


def _facts(text: str) -> set[str]:
    return {fact.strip("\"'") for fact in FACT.findall(text)}


def _json_shape(text: str):
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict):
        return ("object", frozenset(value))
    return (type(value).__name__, None)


def _format_score(prediction: str, reference: str) -> float:
    ref_shape = _json_shape(reference)
    if ref_shape is not None:
        shape = _json_shape(prediction)
        if shape is None:
            return 0.0
        if shape[0] != ref_shape[0]:
            return 0.25
        if ref_shape[1] is not None:
            keys, want = shape[1], ref_shape[1]
            return 0.5 + 0.5 * len(keys & want) / max(1, len(keys | want))
        return 1.0
    if reference.lstrip().startswith("- ") or "[ref=" in reference:  # accessibility tree
        lines = [line for line in prediction.splitlines() if line.strip()]
        tree = sum(line.lstrip().startswith("- ") or line.startswith(("URL:", "Title:", "Focused:")) for line in lines)
        return tree / max(1, len(lines))
    if not reference.strip():
        return 1.0 if not prediction.strip() else 0.5
    if not prediction.strip():
        return 0.0
    return _profile_similarity(prediction, reference)


def _profile(text: str) -> list[float]:
    """Share of letters, digits, spaces, punctuation and line breaks: the texture of an output."""
    sample = text[:4000]
    counts = [
        sum(c.isalpha() for c in sample),
        sum(c.isdigit() for c in sample),
        sample.count(" "),
        sum(not c.isalnum() and not c.isspace() for c in sample),
        sample.count("\n"),
    ]
    total = max(1, sum(counts))
    return [c / total for c in counts]


def _profile_similarity(prediction: str, reference: str) -> float:
    a, b = _profile(prediction), _profile(reference)
    return max(0.0, 1 - sum(abs(x - y) for x, y in zip(a, b, strict=True)) / 2)


def judge_reference(prediction: str | None, reference: str, history: str = "") -> Scores:
    """The embedded judge: compares the prediction with the real observation (and the history it must agree with)."""
    if prediction is None:
        return Scores(1, 1, 1, 1, 1)
    ref_facts, pred_facts = _facts(reference), _facts(prediction)
    recall = len(ref_facts & pred_facts) / len(ref_facts) if ref_facts else (1.0 if not pred_facts else 0.5)
    known = ref_facts | _facts(history)
    invented = pred_facts - known
    # No facts at all is only consistent where none were expected; otherwise it is no evidence of consistency.
    consistency = 1 - len(invented) / len(pred_facts) if pred_facts else (1.0 if not ref_facts else 0.0)
    lengths = sorted((len(prediction), len(reference)))
    length_ratio = (lengths[0] + 1) / (lengths[1] + 1)
    lines = sorted((prediction.count("\n"), reference.count("\n")))
    line_ratio = (lines[0] + 1) / (lines[1] + 1)
    similarity = difflib.SequenceMatcher(None, prediction[:4000], reference[:4000], autojunk=False).ratio()
    return Scores(
        format=_scale(_format_score(prediction, reference)),
        factuality=_scale(recall),
        consistency=_scale(consistency),
        realism=_scale(0.5 * length_ratio + 0.5 * line_ratio),
        quality=_scale(similarity),
    )


def parse_judge_answer(text: str) -> Scores | None:
    """An LLM judge's answer: a JSON object with the five scores (1-5), possibly inside other text."""
    for match in re.finditer(r"\{[^{}]*\}", text, re.DOTALL):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        if all(isinstance(data.get(k), (int, float)) and 1 <= data[k] <= 5 for k in DIMENSIONS):
            return Scores(**{k: float(data[k]) for k in DIMENSIONS})
    return None


JUDGE_PROMPT = """You judge how well a world model predicted an environment's observation.
Score each dimension from 1 (bad) to 5 (perfect):
- format: does it have the structure and format the environment's real output has?
- factuality: are deterministic facts (paths, numbers, ids, names) exactly right?
- consistency: is it consistent with the interaction history?
- realism: would a real environment produce exactly this?
- quality: overall, how close is it to the real observation?

History (abridged):
{history}

Action:
{action}

Real observation:
{reference}

Predicted observation:
{prediction}

Answer with only a JSON object: {{"format": n, "factuality": n, "consistency": n, "realism": n, "quality": n}}"""

PAIRWISE_PROMPT = """Two world models predicted an environment's observation for the same action.

Action:
{action}

Real observation:
{reference}

Prediction A:
{a}

Prediction B:
{b}

Which prediction is closer to the real observation in format, facts and content? Answer with one letter: A or B."""
