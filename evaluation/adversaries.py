"""Adversarial candidates for judge calibration: plausible wrong observations a judge must score below the real
one. Each takes the turn (its real observation, the earlier ones, the action) and a seeded random source, and
returns a candidate, or None where the kind does not apply (the candidate would equal the real observation)."""

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from trajforge.evaluation.facts import FACT, normalized, reports_error
from trajforge.evaluation.turns import PredictionTurn
from trajforge.schemas.validation import is_json


@dataclass(frozen=True)
class CalibrationTurn(PredictionTurn):
    """A turn with observations of the same kind from other trajectories (what `other_trajectory` draws from)."""

    others: tuple[str, ...] = ()


def _is_page(text: str) -> bool:
    return text.startswith("URL: ") or "[ref=" in text


def previous(turn: CalibrationTurn, rng: random.Random) -> str | None:
    """The previous observation, copied: a stale world."""
    return turn.history[-1][1] if turn.history else None


def outcome_flip(turn: CalibrationTurn, rng: random.Random) -> str | None:
    """A generic success message for an error, and an error for a success."""
    command = turn.action.split()[0] if turn.action.split() else "command"
    if reports_error(turn.reference):
        if is_json(turn.reference):
            return json.dumps({"content": [{"type": "text", "text": "Success"}], "isError": False})
        return rng.choice(["Success", "Done.", "OK", "Operation completed successfully."])
    if is_json(turn.reference):
        return json.dumps({"content": [{"type": "text", "text": "Error: permission denied"}], "isError": True})
    if _is_page(turn.reference):
        first = turn.reference.splitlines()[0]
        return f'{first}\nTitle: Error\n- heading "500 Internal Server Error"'
    return rng.choice([f"bash: {command}: command not found", f"bash: {command}: Permission denied"])


def _shift_digits(text: str, rng: random.Random) -> str:
    offset = rng.randint(1, 8)
    return re.sub(r"\d", lambda m: str((int(m.group(0)) + offset) % 10), text)


def numbers_changed(turn: CalibrationTurn, rng: random.Random) -> str | None:
    """The same text with numbers, ids and paths changed."""
    text = _shift_digits(turn.reference, rng)
    text = re.sub(r"(?<=/)([A-Za-z_][\w-]*)", lambda m: m.group(1)[::-1] if len(m.group(1)) > 2 else m.group(1), text)
    return text


def lines_dropped_or_shuffled(turn: CalibrationTurn, rng: random.Random) -> str | None:
    """Lines dropped (or, for a single line, its words shuffled)."""
    lines = turn.reference.splitlines()
    if len(lines) >= 3:
        kept = [line for i, line in enumerate(lines) if i == 0 or rng.random() > 0.4]
        if len(kept) == len(lines):
            kept.pop(rng.randrange(1, len(kept)))
        return "\n".join(kept)
    if len(lines) == 2:
        return "\n".join(reversed(lines))
    words = turn.reference.split(" ")
    if len(words) < 2:
        return None
    for _ in range(5):
        rng.shuffle(words)
        if " ".join(words) != turn.reference:
            break
    return " ".join(words)


def empty(turn: CalibrationTurn, rng: random.Random) -> str | None:
    return ""


def other_trajectory(turn: CalibrationTurn, rng: random.Random) -> str | None:
    """Another trajectory's observation of the same kind."""
    options = [o for o in turn.others if normalized(o) != normalized(turn.reference)]
    return rng.choice(options) if options else None


def one_fact_altered(turn: CalibrationTurn, rng: random.Random) -> str | None:
    """The real observation with one fact (a number, id, path or name) altered."""
    matches = [m for m in FACT.finditer(turn.reference) if any(c.isalnum() for c in m.group(0))]
    if not matches:
        words = [m for m in re.finditer(r"[A-Za-z]{4,}", turn.reference)]
        if not words:
            return None
        matches = words
    match = rng.choice(matches)
    fact = match.group(0)
    if any(c.isdigit() for c in fact):
        altered = _shift_digits(fact, rng)
    else:
        letters = [i for i, c in enumerate(fact) if c.isalpha()]
        i = rng.choice(letters)
        altered = fact[:i] + ("x" if fact[i].lower() != "x" else "q") + fact[i + 1 :]
    return turn.reference[: match.start()] + altered + turn.reference[match.end() :]


def verbose_paraphrase(turn: CalibrationTurn, rng: random.Random) -> str | None:
    """A chatty rendering that wraps the content in prose and adds invented facts."""
    n = rng.randint(2, 97)
    invented = f"Additionally, /var/cache/session_{rng.randint(1000, 9999)}.db was updated with {n} new entries."
    if is_json(turn.reference):
        try:
            payload = json.loads(turn.reference)
        except ValueError:
            payload = turn.reference
        return f"Here is the result of the call:\n{json.dumps(payload, indent=2)}\n{invented}"
    return f"The environment processed the action. The output is shown below.\n{turn.reference}\n{invented}"


KINDS: dict[str, Callable[[CalibrationTurn, random.Random], str | None]] = {
    "previous_copied": previous,
    "outcome_flipped": outcome_flip,
    "numbers_ids_paths_changed": numbers_changed,
    "lines_dropped_or_shuffled": lines_dropped_or_shuffled,
    "empty": empty,
    "other_trajectory": other_trajectory,
    "one_fact_altered": one_fact_altered,
    "verbose_paraphrase": verbose_paraphrase,
}


def adversaries(turn: CalibrationTurn, rng: random.Random) -> dict[str, str]:
    """Every kind that applies to the turn: kind -> candidate (never the real observation itself)."""
    out = {}
    real = normalized(turn.reference)
    for kind, make in KINDS.items():
        candidate = make(turn, rng)
        if candidate is not None and normalized(candidate) != real:
            out[kind] = candidate
    return out
