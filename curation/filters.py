"""The paper's filters (§3.1.2), one small class each, run in the order they are registered in FILTERS.

A filter either drops the whole trajectory (it returns a `Drop` with the detail of why) or returns it with some
turns removed. Its `name` is one string everywhere: `--disable NAME`, the drop reason in `_filtered.jsonl`, and
the manifest keys `filtered.NAME` (trajectories dropped) and `turns_removed.NAME` (turns removed). Turn removal
keeps state continuity: only turns that changed nothing go. A new filter is one class here, `@FILTERS.register()`."""

import json
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cached_property
from typing import ClassVar

from trajforge.schemas.control_record import last_instructed_action
from trajforge.schemas.records import Trajectory, Turn
from trajforge.schemas.registry import Registry

GUI_DOMAINS = ("web", "os", "android")
TOOL_DOMAINS = ("mcp", "swe", "search")
RETRY_SIMILARITY = 0.8  # a failed command and the next one this alike (difflib ratio) are one retry cycle


@dataclass(frozen=True)
class Drop:
    detail: str  # why this trajectory, in words (the reason itself is the filter's name)


class TrajectoryFilter:
    name: ClassVar[str]  # --disable NAME, the drop reason, the manifest count key
    reason: ClassVar[str]  # what it drops and why, one line (for --help)

    def apply(self, record: Trajectory) -> Trajectory | Drop:
        raise NotImplementedError


class TurnFilter(TrajectoryFilter):
    """A filter that removes turns: `keep(record, turn, next_turn)` says which stay. In a trajectory that records a
    control spec, every turn up to the last action the spec names stays: the instruction names faults by the
    action's place ("action 3 fails"), so removing the faulted turn (a retry cycle, for an injected error) would
    leave an instruction the episode contradicts, and removing one before it would make it name another action."""

    def apply(self, record: Trajectory) -> Trajectory | Drop:
        turns = record.turns
        keep = [self.keep(record, t, turns[i + 1] if i + 1 < len(turns) else None) for i, t in enumerate(turns)]
        if all(keep):
            return record
        instructed = last_instructed_action(record.metadata)  # read only when a turn would go
        kept = [t for t, k in zip(turns, keep, strict=True) if k or (instructed is not None and t.index <= instructed)]
        return record if len(kept) == len(turns) else record.model_copy(update={"turns": kept})

    def keep(self, record: Trajectory, turn: Turn, next_turn: Turn | None) -> bool:
        raise NotImplementedError


# The registry, in the order the filters run (the order of this file): specific drops before general ones, and
# turn counts last.
FILTERS: Registry[type[TrajectoryFilter]] = Registry("filter", name_of=lambda f: f.name)


@FILTERS.register()
class GuiEnvironmentFailures(TrajectoryFilter):
    name = "gui_environment_failures"
    reason = "GUI trajectories whose environment failed (a page that never loaded)"

    def apply(self, record):
        if record.domain in GUI_DOMAINS and record.outcome.status == "infra_error":
            return Drop(f"{record.domain} environment failed: {record.outcome.error or 'infra_error'}")
        return record


@FILTERS.register()
class InfraErrors(TrajectoryFilter):
    name = "infra_errors"
    reason = "infrastructure failures never become training targets"

    def apply(self, record):
        if record.outcome.status == "infra_error":
            return Drop(record.outcome.error or "infra_error")
        return record


@FILTERS.register()
class UndeclaredTools(TrajectoryFilter):
    name = "undeclared_tools"
    reason = "MCP/SWE/search calls to tools absent from the declared action space"

    def apply(self, record):
        if record.domain not in TOOL_DOMAINS:
            return record
        declared = _declared_tools(record)
        called = {t.action.name for t in record.turns if t.action.kind == "tool_call"}
        if declared is not None and called - declared:
            return Drop(f"calls tools not in the action space: {', '.join(sorted(map(str, called - declared)))}")
        return record


@FILTERS.register()
class EmptyActions(TurnFilter):
    name = "empty_actions"
    reason = "turns whose action is empty are removed"

    def keep(self, record, turn, next_turn):
        content = turn.action.content.strip()
        return bool(content) and content not in ("{}", "null") or turn.action.kind in ("browser", "tool_call")


@FILTERS.register()
class RetryCycles(TurnFilter):
    name = "retry_cycles"
    reason = "a failed call followed by its retry (the same command again, up to a small edit): the failed one goes"

    def keep(self, record, turn, next_turn):
        return next_turn is None or not (_failed(turn) and _same_command(turn.action, next_turn.action))


@FILTERS.register()
class GuiNoChange(TurnFilter):
    name = "gui_no_change"
    reason = "GUI turns that left the state as it was are removed"

    def keep(self, record, turn, next_turn):
        return record.domain not in GUI_DOMAINS or not turn.no_change


@FILTERS.register()
class MinTurns(TrajectoryFilter):
    name = "min_turns"
    reason = "trajectories left with fewer turns than --min-turns"

    def __init__(self, minimum: int):
        self.minimum = minimum

    def apply(self, record):
        if len(record.turns) < self.minimum:
            return Drop(f"{len(record.turns)} turns, fewer than {self.minimum}")
        return record


@dataclass(frozen=True)
class FilterConfig:
    disabled: tuple[str, ...] = ()  # names of FILTERS switched off
    min_turns: int = 2  # fewer turns than this: dropped (0 disables)

    def __post_init__(self):
        FILTERS.check(self.disabled)
        object.__setattr__(self, "disabled", tuple(sorted(set(self.disabled))))

    @classmethod
    def from_dict(cls, data: dict) -> "FilterConfig":
        """{"min_turns": n, NAME: false, ...}: every filter not named false is on."""
        data = dict(data)
        min_turns = data.pop("min_turns", cls.min_turns)
        disabled = tuple(name for name, on in data.items() if not on or name not in FILTERS)
        return cls(disabled=disabled, min_turns=min_turns)

    @cached_property
    def enabled(self) -> list[TrajectoryFilter]:
        """The filters that run, built once, in FILTERS's order."""
        built = {name: factory for name, factory in FILTERS.items() if name not in self.disabled}
        if not self.min_turns:
            built.pop(MinTurns.name, None)
        return [MinTurns(self.min_turns) if f is MinTurns else f() for f in built.values()]


@dataclass(frozen=True)
class FilterResult:
    record: Trajectory | None  # None when dropped
    dropped_by: str | None  # the dropping filter's name
    detail: str | None  # why, in words
    removed_turns: Counter  # filter name -> turns removed


def apply_filters(record: Trajectory, config: FilterConfig) -> FilterResult:
    removed: Counter = Counter()
    if record.source.kind == "knowledge":  # a one-turn document by design: the trajectory filters do not apply
        return FilterResult(record, None, None, removed)
    current = record
    for unit in config.enabled:
        before = len(current.turns)
        outcome = unit.apply(current)
        if isinstance(outcome, Drop):
            return FilterResult(None, unit.name, outcome.detail, +removed)
        removed[unit.name] += before - len(outcome.turns)
        current = outcome
    if len(current.turns) != len(record.turns):
        turns = [t.model_copy(update={"index": i}) for i, t in enumerate(current.turns)]
        current = current.model_copy(update={"turns": turns}).with_content_id()
    return FilterResult(current, None, None, +removed)


def _declared_tools(record: Trajectory) -> set[str] | None:
    """The tool names an action space declares: MCP's {"name": ...} or OpenAI's {"function": {"name": ...}} (what
    imported ATIF `tool_definitions` and OpenHands tools are); None when it declares none (an import that does not
    know its action space, "[]"): nothing to check the calls against."""
    try:
        space = json.loads(record.action_space)
    except ValueError:
        return None
    if not isinstance(space, list):
        return None
    tools = [t for t in space if isinstance(t, dict)]
    names = {
        t.get("name") or (t["function"].get("name") if isinstance(t.get("function"), dict) else None) for t in tools
    }
    return names - {None} or None


def _failed(turn: Turn) -> bool:
    obs = turn.observation
    return obs.is_error or (obs.exit_code is not None and obs.exit_code != 0)


def _same_command(a, b) -> bool:
    """A retry: the same tool again, or the same shell command again up to a small edit (`git comit` -> `git
    commit`); a different command of the same program (`git commit` -> `git add`) is the next step, not a retry."""
    if a.kind != b.kind:
        return False
    if a.kind in ("tool_call", "browser"):
        return a.name == b.name
    first, second = a.content.split(), b.content.split()
    if not first or first[:1] != second[:1]:
        return False
    return SequenceMatcher(None, " ".join(first), " ".join(second)).ratio() >= RETRY_SIMILARITY
