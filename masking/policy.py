"""Masking policies: ordered rules over a turn's statistics that give it a category and a keep ratio.

A policy is YAML (bundled ones in masking/policies/; paper.yaml comments every field):

    name: paper
    keep_mode: turn_sampling        # what a keep ratio means: turn_sampling | span (masking/masks.py)
    seed: 0                         # for turn_sampling draws
    short_chars: 32                 # the statistic `short` is 1 when the observation has at most this many characters
    span: {layout: spread, chunk_chars: 256}              # span mode: spread | head; pieces of long lines
    context: {previous_observations: 1, max_bytes: 4096}  # what compression_gain compresses against (<= 8 KiB)
    rules:                          # first match wins; the last rule must match every turn (when: [])
      - category: echo
        keep: 0.05                  # in [0, 1]
        when:                       # all must hold
          - {stat: overlap, op: ">=", value: 0.7}
          - {stat: novelty, op: "<", value: 0.3}
      - category: action
        keep: 1.0
        when:                       # an `any` entry holds when one of its comparisons does
          - {stat: novelty, op: ">=", value: 0.5}
          - any: [{stat: length_ratio, op: "<=", value: 1}, {stat: short, op: "==", value: 1}]
      - {category: other, keep: 1.0, when: []}

stat: overlap, novelty, jaccard, length_ratio, action_chars, observation_chars, short, compression_gain,
predictability; op: <, <=, >, >=, ==, !=. Categories are unique.
A comparison on a statistic that was not computed (compression_gain, predictability) is false.
"""

import operator
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, model_validator

from trajforge.masking.information import MAX_CONTEXT_BYTES
from trajforge.masking.masks import KeepMode, SpanLayout
from trajforge.masking.statistics import TurnStatistics
from trajforge.schemas.hashing import config_hash
from trajforge.schemas.registry import unknown_message

POLICY_DIR = Path(__file__).resolve().parent / "policies"

Stat = Literal[
    "overlap",
    "novelty",
    "jaccard",
    "length_ratio",
    "action_chars",
    "observation_chars",
    "short",
    "compression_gain",
    "predictability",
]
Op = Literal["<", "<=", ">", ">=", "==", "!="]
_OPERATORS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


class PolicyError(ValueError):
    """A policy that cannot be loaded; the message names the file and every problem with its path."""


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Comparison(_Config):
    stat: Stat
    op: Op
    value: float


class AnyOf(_Config):
    any: list[Comparison] = Field(min_length=1)


def _condition_kind(value) -> str:
    return (
        "any_of"
        if isinstance(value, dict | AnyOf) and "any" in (value if isinstance(value, dict) else {"any"})
        else "comparison"
    )


Condition = Annotated[
    Annotated[Comparison, Tag("comparison")] | Annotated[AnyOf, Tag("any_of")],
    Discriminator(_condition_kind),
]


class Rule(_Config):
    category: str = Field(min_length=1)
    keep: float = Field(ge=0, le=1)
    when: list[Condition] = Field(default_factory=list, description="all must hold; [] matches every turn")


class SpanOptions(_Config):
    layout: SpanLayout = "spread"
    chunk_chars: int = Field(default=256, ge=1)


class ContextOptions(_Config):
    previous_observations: int = Field(default=1, ge=0, description="observations before the turn's action")
    max_bytes: int = Field(default=4096, ge=0, le=MAX_CONTEXT_BYTES, description="the context's tail that is used")


class PolicyConfig(_Config):
    name: str = Field(min_length=1)
    description: str = ""
    keep_mode: KeepMode
    seed: int = 0
    short_chars: int = Field(default=32, ge=0)
    span: SpanOptions = SpanOptions()
    context: ContextOptions = ContextOptions()
    rules: list[Rule] = Field(min_length=1)

    @model_validator(mode="after")
    def _rules_cover_every_turn(self) -> "PolicyConfig":
        categories = [rule.category for rule in self.rules]
        duplicates = sorted({c for c in categories if categories.count(c) > 1})
        if duplicates:
            raise ValueError(f"categories must be unique, repeated: {', '.join(duplicates)}")
        if self.rules[-1].when:
            raise ValueError(f"the last rule ({self.rules[-1].category}) must match every turn: give it `when: []`")
        return self


_Clause = tuple[tuple[str, object, float], ...]  # alternatives (stat, operator, value); one must hold


class MaskingPolicy:
    """A validated policy, compiled for cheap per-turn use; picklable."""

    def __init__(self, config: PolicyConfig):
        self.config = config
        # name and description are labels: the hash covers what decides the masks.
        self.config_hash = config_hash(config.model_dump(mode="json", exclude={"name", "description"}))
        self._rules: tuple[tuple[str, float, tuple[_Clause, ...]], ...] = tuple(
            (rule.category, rule.keep, tuple(_clause(condition) for condition in rule.when)) for rule in config.rules
        )
        used = {stat for _, _, clauses in self._rules for clause in clauses for stat, _, _ in clause}
        self.needs_compression_gain = "compression_gain" in used
        self.needs_predictability = "predictability" in used

    @property
    def name(self) -> str:
        return self.config.name

    def __repr__(self) -> str:
        return f"MaskingPolicy({self.name!r}, {self.config_hash})"

    def classify(self, statistics: TurnStatistics) -> tuple[str, float]:
        """(category, keep ratio) of the first rule whose conditions all hold."""
        short = 1.0 if statistics.observation_chars <= self.config.short_chars else 0.0
        # Plain loops: this runs for every turn of the corpus.
        for category, keep, clauses in self._rules:
            for clause in clauses:
                if not _holds(clause, statistics, short):
                    break
            else:
                return category, keep
        raise AssertionError("the last rule matches every turn")  # guaranteed by PolicyConfig


def _clause(condition: Comparison | AnyOf) -> _Clause:
    comparisons = condition.any if isinstance(condition, AnyOf) else [condition]
    return tuple((c.stat, _OPERATORS[c.op], c.value) for c in comparisons)


def _holds(clause: _Clause, statistics: TurnStatistics, short: float) -> bool:
    for stat, compare, value in clause:
        actual = short if stat == "short" else getattr(statistics, stat)
        if actual is not None and compare(actual, value):
            return True
    return False


def bundled_policies() -> list[str]:
    """The policies masking/policies/ holds, by name: they are files, found by name, so they need no registry."""
    return sorted(path.stem for path in POLICY_DIR.glob("*.yaml"))


def load_policy(name_or_path: str | Path) -> MaskingPolicy:
    """A bundled policy by name ("paper", "information") or a policy YAML file by path."""
    bundled = POLICY_DIR / f"{name_or_path}.yaml"
    if isinstance(name_or_path, str) and name_or_path in bundled_policies():
        path = bundled
    else:
        path = Path(name_or_path)
        if not path.is_file():
            known = unknown_message("masking policy", [str(name_or_path)], bundled_policies())
            raise PolicyError(f"{known}; nor is it a policy file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise PolicyError(f"policy {path}: not valid YAML: {exc}") from None
    return parse_policy(data, origin=str(path))


def parse_policy(data: object, origin: str = "<policy>") -> MaskingPolicy:
    """A policy from decoded YAML/JSON; PolicyError lists every problem, e.g. "rules[2].keep: ..."."""
    if not isinstance(data, dict):
        raise PolicyError(f"policy {origin}: expected a mapping, got {type(data).__name__}")
    try:
        config = PolicyConfig.model_validate(data)
    except ValidationError as exc:
        problems = "\n".join(f"  {_problem(error)}" for error in exc.errors())
        raise PolicyError(f"policy {origin} is invalid:\n{problems}") from None
    return MaskingPolicy(config)


def _problem(error: dict) -> str:
    path = ""
    for part in error["loc"]:
        if part in ("comparison", "any_of"):  # union tags, not fields
            continue
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    message = error["msg"][0].lower() + error["msg"][1:]
    message = message.removeprefix("value error, ")
    if error["type"] not in ("missing", "value_error") and not isinstance(error.get("input"), dict | list):
        message += f" (got {error['input']!r})"
    return f"{path}: {message}" if path else message
