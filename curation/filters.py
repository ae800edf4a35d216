"""The paper's filters (§3.1.2), each switchable: a trajectory is dropped with a reason, or turns are removed
from it with a count per reason. Turn removal keeps state continuity: only turns that changed nothing go."""

import json
from collections import Counter
from dataclasses import dataclass, fields

from schemas.records import Trajectory

GUI_DOMAINS = ("web", "os", "android")
TOOL_DOMAINS = ("mcp", "swe", "search")


@dataclass(frozen=True)
class FilterConfig:
    infra_errors: bool = True  # infrastructure failures never become training targets
    min_turns: int = 2  # fewer turns than this: dropped (0 disables)
    undeclared_tools: bool = True  # MCP/SWE/search calls to tools absent from the declared action space
    gui_environment_failures: bool = True  # GUI trajectories whose environment failed (pages that never loaded)
    empty_actions: bool = True  # turns whose action is empty are stripped
    retry_cycles: bool = True  # (garbage, error, retry): the failed attempt is skipped
    gui_no_change: bool = True  # GUI turns that left the state as it was are removed

    @classmethod
    def from_dict(cls, data: dict) -> "FilterConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown filters: {', '.join(sorted(unknown))} (known: {', '.join(sorted(known))})")
        return cls(**data)


@dataclass(frozen=True)
class FilterResult:
    record: Trajectory | None  # None when dropped
    dropped_by: str | None
    removed_turns: Counter  # reason -> turns removed


def _declared_tools(record: Trajectory) -> set[str] | None:
    try:
        space = json.loads(record.action_space)
    except ValueError:
        return None
    if not isinstance(space, list):
        return None
    return {t.get("name") for t in space if isinstance(t, dict)}


def _failed(turn) -> bool:
    obs = turn.observation
    return obs.is_error or (obs.exit_code is not None and obs.exit_code != 0)


def _same_intent(a, b) -> bool:
    """A retry: the same tool, or a shell command starting with the same program."""
    if a.kind != b.kind:
        return False
    if a.kind in ("tool_call", "browser"):
        return a.name == b.name
    first = a.content.split()[:1]
    return bool(first) and first == b.content.split()[:1]


def apply_filters(record: Trajectory, config: FilterConfig) -> FilterResult:
    removed: Counter = Counter()
    if record.source.kind == "knowledge":  # a one-turn document by design: the trajectory filters do not apply
        return FilterResult(record, None, removed)
    if config.infra_errors and record.outcome.status == "infra_error":
        return FilterResult(None, "infra_error", removed)
    if config.gui_environment_failures and record.domain in GUI_DOMAINS and record.outcome.status == "infra_error":
        return FilterResult(None, "gui_environment_failure", removed)
    if config.undeclared_tools and record.domain in TOOL_DOMAINS:
        declared = _declared_tools(record)
        calls = {t.action.name for t in record.turns if t.action.kind == "tool_call"}
        if declared is not None and calls - declared:
            return FilterResult(None, "undeclared_tool", removed)
    turns = list(record.turns)
    if config.empty_actions:
        kept = [
            t
            for t in turns
            if t.action.content.strip()
            and t.action.content.strip() not in ("{}", "null")
            or t.action.kind in ("browser", "tool_call")
        ]
        removed["empty_action"] += len(turns) - len(kept)
        turns = kept
    if config.retry_cycles:
        kept = [
            t
            for i, t in enumerate(turns)
            if not (i + 1 < len(turns) and _failed(t) and _same_intent(t.action, turns[i + 1].action))
        ]
        removed["retry_cycle"] += len(turns) - len(kept)
        turns = kept
    if config.gui_no_change and record.domain in GUI_DOMAINS:
        kept = [t for t in turns if not t.no_change]
        removed["gui_no_change"] += len(turns) - len(kept)
        turns = kept
    if config.min_turns and len(turns) < config.min_turns:
        return FilterResult(None, "too_few_turns", removed)
    if len(turns) != len(record.turns):
        turns = [t.model_copy(update={"index": i}) for i, t in enumerate(turns)]
        record = record.model_copy(update={"turns": turns}).with_content_id()
    return FilterResult(record, None, +removed)
