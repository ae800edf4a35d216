"""Validation that reports every problem with its path and never raises on bad data."""

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from trajforge.schemas.records import Trajectory
from trajforge.schemas.version import SUPPORTED_SCHEMA_VERSIONS

DEFAULT_MAX_OBSERVATION_CHARS = 8 * 1024 * 1024
JSON_STRING_FIELDS = ("action_space", "metadata")


@dataclass(frozen=True)
class Problem:
    path: str  # "turns[3].observation.content"; "" for the record as a whole
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def format_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _message(error: dict) -> str:
    kind = error["type"]
    if kind == "missing":
        return "missing"
    if kind == "extra_forbidden":
        return "unknown field"
    got = error.get("input")
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{error['msg'].lower()} (got {shown})"


def validate_record(
    data: Any, max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS
) -> tuple[Trajectory | None, list[Problem]]:
    """Check one decoded record against the contract. Returns the record, or None and every problem found."""
    if not isinstance(data, dict):
        return None, [Problem("", f"expected a JSON object, got {type(data).__name__}")]

    version = data.get("schema_version")
    if version is None:
        return None, [Problem("schema_version", "missing")]
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        accepted = ", ".join(SUPPORTED_SCHEMA_VERSIONS)
        return None, [Problem("schema_version", f"unknown version {version!r} (this reader accepts {accepted})")]

    problems = _size_problems(data, max_observation_chars)
    try:
        record = Trajectory.model_validate(data)
    except ValidationError as exc:
        problems += [Problem(format_path(e["loc"]), _message(e)) for e in exc.errors()]
        return None, problems
    problems += _semantic_problems(record)
    return (None, problems) if problems else (record, [])


def _size_problems(data: dict, limit: int) -> list[Problem]:
    turns = data.get("turns")
    if not isinstance(turns, list):
        return []
    problems = []
    for i, turn in enumerate(turns):
        content = turn.get("observation", {}).get("content") if isinstance(turn, dict) else None
        if isinstance(content, str) and len(content) > limit:
            problems.append(
                Problem(
                    f"turns[{i}].observation.content",
                    f"{len(content):,} characters exceeds the limit of {limit:,}",
                )
            )
    return problems


def _semantic_problems(record: Trajectory) -> list[Problem]:
    problems = []
    for i, turn in enumerate(record.turns):
        if turn.index != i:
            problems.append(Problem(f"turns[{i}].index", f"expected {i}, got {turn.index}"))
    for name in JSON_STRING_FIELDS:
        value = getattr(record, name)
        if value is not None and not is_json(value):
            problems.append(Problem(name, "not a valid JSON string"))
    expected = record.content_id()
    if record.trajectory_id != expected:
        problems.append(Problem("trajectory_id", f"does not match the content hash (expected {expected})"))
    return problems


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@dataclass
class ReadResult:
    """One record as a reader saw it: the valid record, or the problems and the raw bytes to quarantine."""

    source: str  # file the record came from
    locator: str  # "line 3", "row 17", "file"
    record: Trajectory | None
    problems: list[Problem]
    raw: bytes | None = None

    @property
    def ok(self) -> bool:
        return self.record is not None

    def reasons(self) -> list[str]:
        return [str(p) for p in self.problems]
