"""Controllability, measured on episodes that record their control spec (sandboxes/control.py): of the faults a
world model was instructed to show, the share it produced (a detector per fault kind reads each predicted
observation, sandboxes/fault_kinds.py), and of the turns it was told nothing about, the share where it produced
none. Latency leaves no trace in text: it is applied by the environment, never scored here, and a turn whose
only instruction is latency counts as uninstructed.

The denominator is what was asked, never what was answered: every observable fault instructed at a turn the
episode reached (and whose action it can hit) counts, so an answer that leaves no room for the fault (an output
no longer than the cut it was told to truncate) is a miss, counted by kind under `missed_too_short`, and a model
cannot shrink its own denominator. The intervals are over tasks: the turns and repeats of one task are one cluster
(evaluation/paired.py), as they share the task's instruction and its answers are not independent draws."""

from collections import Counter
from collections.abc import Hashable, Iterable
from typing import NamedTuple

from trajforge.evaluation.paired import clustered_share_interval
from trajforge.sandboxes.control import ControlSpec, recorded_control
from trajforge.sandboxes.fault_kinds import FAULT_KINDS, detected, fits, observable
from trajforge.schemas.records import Action, Trajectory
from trajforge.schemas.splits import task_key


class ControlledTurn(NamedTuple):
    """One turn to score: its episode's spec, its index, its action, the observation shown, and its task (the
    cluster its interval resamples)."""

    spec: ControlSpec
    index: int
    action: Action
    text: str
    task: Hashable


def controllability(records: Iterable[Trajectory]) -> dict:
    """Over the episodes of `records` that record a control spec (the others are not counted)."""
    episodes = [(spec, r) for r in records if (spec := recorded_control(r.metadata)) is not None]
    turns = (
        ControlledTurn(spec, t.index, t.action, t.observation.content, task_key(r.model_dump()))
        for spec, r in episodes
        for t in r.turns
    )
    return {"episodes": len(episodes), **turn_controllability(turns)}


def turn_controllability(turns: Iterable[ControlledTurn]) -> dict:
    """Over single turns: instructed faults produced and uninstructed turns clean, each with its interval over
    tasks (None where there is nothing to count)."""
    instructed: Counter = Counter()
    produced: Counter = Counter()
    short: Counter = Counter()
    faults: list[tuple[Hashable, float]] = []  # (task, produced) per instructed fault
    quiet: list[tuple[Hashable, float]] = []  # (task, clean) per uninstructed turn
    for turn in turns:
        kinds = {i.kind: i.params for i in turn.spec.at(turn.index, turn.action) if observable(i.kind)}
        found = detected(turn.text)
        for kind, params in sorted(kinds.items()):
            instructed[kind] += 1
            produced[kind] += kind in found
            short[kind] += kind not in found and not fits(kind, turn.text, params)
            faults.append((turn.task, float(kind in found)))
        if not kinds:
            quiet.append((turn.task, float(not found)))
    produced_share, produced_interval = _share(faults)
    clean_share, clean_interval = _share(quiet)
    return {
        "instructed_faults": len(faults),
        "produced_share": produced_share,
        "produced_interval": produced_interval,
        "tasks": len({task for task, _ in faults}),
        "per_kind": {k: {"instructed": n, "produced": produced[k]} for k, n in sorted(instructed.items())},
        "missed_too_short": {k: n for k, n in sorted(short.items()) if n},
        "uninstructed_turns": len(quiet),
        "clean_share": clean_share,
        "clean_interval": clean_interval,
        "not_scored": sorted(k for k in FAULT_KINDS if not observable(k)),
    }


def _share(units: list[tuple[Hashable, float]]) -> tuple[float | None, list[float] | None]:
    """The mean of 0/1 outcomes and its 95% interval, resampling tasks (None, None for no unit)."""
    if not units:
        return None, None
    mean, low, high = clustered_share_interval([v for _, v in units], [task for task, _ in units])
    return mean, [low, high]


def describe_produced(figures: dict) -> str:
    """e.g. "92.8 [85.8, 97.0] n=97": instructed faults produced, %, its interval over tasks and its count."""
    share, interval = figures.get("produced_share"), figures.get("produced_interval")
    if share is None:
        return "-"
    low, high = interval if interval is not None else (share, share)
    return f"{share * 100:.1f} [{low * 100:.1f}, {high * 100:.1f}] n={figures['instructed_faults']}"
