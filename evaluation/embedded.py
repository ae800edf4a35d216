"""The embedded judge: deterministic and offline, it compares a prediction with the real observation and the
history, and names itself as what it is (no model, not comparable with AgentWorldBench's LLM judge).

It rewards only what can be checked: the same outcome (an error where the environment reported one), the facts
the action brought (numbers, paths, ids and lines the history did not already hold), no invented facts, not a
copy of an earlier observation, the real output's structure and size. Only the exact observation scores 5
everywhere."""

import difflib
import json

from trajforge.evaluation.facts import facts, lines, normalized, reports_error, words
from trajforge.evaluation.judge import Judge, Judgement
from trajforge.evaluation.scores import Scores
from trajforge.evaluation.turns import PredictionTurn

NEAR_PERFECT = 0.95  # the most quality a prediction that is not the observation can reach
STALE_SIMILARITY = 0.9  # a prediction at least this close to an earlier observation (and closer than to the real one)
HISTORY_CHECKED = 8  # earlier observations compared for staleness, newest first
MAX_CHARS = 4000


def _scale(x: float) -> float:
    """[0, 1] -> [1, 5]."""
    return round(1 + 4 * min(1.0, max(0.0, x)), 3)


def _f1(a, b) -> float:
    """F1 of two multisets (Counters); 1 when both are empty."""
    if not a and not b:
        return 1.0
    common = sum((a & b).values())
    return 2 * common / (sum(a.values()) + sum(b.values()))


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a[:MAX_CHARS], b[:MAX_CHARS], autojunk=False).ratio()


def _line_similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.splitlines(), b.splitlines(), autojunk=False).ratio()


def _json_shape(text: str):
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict):
        return ("object", frozenset(value))
    return (type(value).__name__, None)


def _profile(text: str) -> list[float]:
    """Share of letters, digits, spaces, punctuation and line breaks: the texture of an output."""
    sample = text[:MAX_CHARS]
    counts = [
        sum(c.isalpha() for c in sample),
        sum(c.isdigit() for c in sample),
        sample.count(" "),
        sum(not c.isalnum() and not c.isspace() for c in sample),
        sample.count("\n"),
    ]
    total = max(1, sum(counts))
    return [c / total for c in counts]


def _format(prediction: str, reference: str) -> float:
    if not reference.strip():
        return 1.0 if not prediction.strip() else 0.5
    if not prediction.strip():
        return 0.0
    ref_shape = _json_shape(reference)
    if ref_shape is not None:
        shape = _json_shape(prediction)
        if shape is None:
            return 0.0
        if shape[0] != ref_shape[0]:
            return 0.25
        if ref_shape[1] is not None:
            return 0.5 + 0.5 * len(shape[1] & ref_shape[1]) / max(1, len(shape[1] | ref_shape[1]))
        return 1.0
    if reference.lstrip().startswith("- ") or "[ref=" in reference:  # an accessibility tree
        rows = [row for row in prediction.splitlines() if row.strip()]
        tree = sum(row.lstrip().startswith("- ") or row.startswith(("URL:", "Title:", "Focused:")) for row in rows)
        return tree / max(1, len(rows))
    a, b = _profile(prediction), _profile(reference)
    return max(0.0, 1 - sum(abs(x - y) for x, y in zip(a, b, strict=True)) / 2)


def _stale(prediction: str, reference: str, history: tuple[tuple[str, str], ...]) -> bool:
    """A copy of an earlier observation where the environment said something else."""
    to_reference = None
    for _, earlier in reversed(history[-HISTORY_CHECKED:]):
        earlier = normalized(earlier)
        if not earlier or earlier == reference:
            continue
        if earlier == prediction:
            return True
        closeness = _line_similarity(prediction, earlier)
        if closeness >= STALE_SIMILARITY:
            to_reference = _line_similarity(prediction, reference) if to_reference is None else to_reference
            if closeness > to_reference:
                return True
    return False


def judge_reference(prediction: str, reference: str, history: tuple[tuple[str, str], ...] = ()) -> Scores:
    prediction, reference = normalized(prediction), normalized(reference)
    if prediction == reference:
        return Scores(5, 5, 5, 5, 5)
    seen = "\n".join(f"{action}\n{observation}" for action, observation in history)
    ref_facts, pred_facts, seen_facts = facts(reference), facts(prediction), facts(seen)
    ref_lines, pred_lines, seen_lines = lines(reference), lines(prediction), lines(seen)

    # Recall, weighted toward what this action brought: facts and lines the history did not hold.
    new = [f for f in ref_facts if f not in seen_facts] + [line for line in ref_lines if line not in seen_lines]
    got_new = sum(f in pred_facts for f in ref_facts if f not in seen_facts) + sum(
        line in pred_lines for line in ref_lines if line not in seen_lines
    )
    recall = len(ref_facts & pred_facts) / len(ref_facts) if ref_facts else 1.0
    new_recall = got_new / len(new) if new else recall
    precision = len(ref_facts & pred_facts) / len(pred_facts) if pred_facts else (0.0 if ref_facts else 1.0)
    invented = pred_facts - ref_facts - seen_facts
    same_outcome = reports_error(prediction) == reports_error(reference) and bool(prediction) == bool(reference)
    stale = _stale(prediction, reference, history)
    word_f1, line_f1 = _f1(words(prediction), words(reference)), _f1(pred_lines, ref_lines)

    factuality = min((0.5 * recall + 0.5 * new_recall) * precision, 0.25 + 0.75 * word_f1)
    consistency = 1 - len(invented) / len(pred_facts) if pred_facts else (1.0 if not ref_facts else 0.5)
    lengths = sorted((len(prediction), len(reference)))
    counts = sorted((prediction.count("\n"), reference.count("\n")))
    realism = 0.5 * (lengths[0] + 1) / (lengths[1] + 1) + 0.5 * (counts[0] + 1) / (counts[1] + 1)
    quality = min(_similarity(prediction, reference), line_f1, word_f1, NEAR_PERFECT) * (0.5 + 0.5 * new_recall)
    if not same_outcome:  # success for an error, or an error for a success: the one thing that must be right
        factuality, realism, quality = 0.0, 0.5 * realism, min(quality, 0.1)
    if stale:
        consistency, quality = min(consistency, 0.25), min(quality, 0.25)
    return Scores(
        format=_scale(_format(prediction, reference)),
        factuality=_scale(factuality),
        consistency=_scale(consistency),
        realism=_scale(realism),
        quality=_scale(quality),
    )


class EmbeddedJudge(Judge):
    name = "embedded"
    comparable = False

    def judge(self, turn: PredictionTurn, prediction: str | None) -> Judgement:
        if prediction is None:
            return Judgement(None, "no answer")
        return Judgement(judge_reference(prediction, turn.reference, turn.history))
