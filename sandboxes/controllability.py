"""Controllability, measured on episodes that record their control spec (sandboxes/control.py): of the faults a
world model was instructed to show, the share it produced (a detector per fault kind reads each predicted
observation, sandboxes/fault_kinds.py), and of the turns it was told nothing about, the share where it produced
none. Latency leaves no trace in text: it is applied by the environment, never scored here, and a turn whose
only instruction is latency counts as uninstructed.

The denominator is what was asked, never what was answered: every observable fault the world model was told of
(at an action it was asked to answer, and whose action it can hit) counts, so an answer that leaves no room for
the fault (an output no longer than the cut it was told to truncate) is a miss, counted by kind under
`missed_too_short`, and an action it was told a fault for but gave no observation of (the episode ended there) is
a miss too, counted under `unanswered`: a model cannot shrink its own denominator. A controlled simulation tells
the faults of each action as it is asked (sandboxes/control.py), so a fault planned for an action the episode
never took was told to no one: it is not in the denominator, and is reported apart by kind, `not_reached`, to show
how much of the plan the episodes covered (a plan of 12 actions, a task of 2). The intervals are over tasks: the
turns and repeats of one task are one cluster (evaluation/paired.py), as they share the task's instruction and
its answers are not independent draws."""

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
    cluster its interval resamples). An action the world model was asked but gave no observation for has no text
    (None) and no recorded action (None: only the faults told for any action count there)."""

    spec: ControlSpec
    index: int
    action: Action | None
    text: str | None
    task: Hashable


def controllability(records: Iterable[Trajectory]) -> dict:
    """Over the episodes of `records` that record a control spec (the others are not counted)."""
    episodes = [(spec, r, task_key(r.model_dump()), asked_actions(spec, r)) for r in records
                if (spec := recorded_control(r.metadata)) is not None]  # fmt: skip
    turns = [ControlledTurn(spec, t.index, t.action, t.observation.content, task)
             for spec, r, task, _ in episodes for t in r.turns]  # fmt: skip
    turns += [ControlledTurn(spec, len(r.turns), None, None, task)
              for spec, r, task, asked in episodes if asked > len(r.turns)]  # fmt: skip
    not_reached = Counter(i.kind for spec, _, _, asked in episodes for i in spec.injections
                          if i.turn >= asked and observable(i.kind))  # fmt: skip
    return {"episodes": len(episodes), **turn_controllability(turns), "not_reached": dict(sorted(not_reached.items()))}


def asked_actions(spec: ControlSpec, record: Trajectory) -> int:
    """How many actions the world model was asked to answer: the episode's turns, and one more where it ended at an
    action whose observation never came, which its last instruction shows (a controlled simulation tells the
    faults up to the action it asks, before asking: that instruction names the unanswered action's faults)."""
    taken = len(record.turns)
    told = spec.before(taken + 1).render()
    if told != spec.before(taken).render() and (record.simulation_instruction or "").endswith(told):
        return taken + 1
    return taken


def turn_controllability(turns: Iterable[ControlledTurn]) -> dict:
    """Over single turns: instructed faults produced and uninstructed turns clean, each with its interval over
    tasks (None where there is nothing to count)."""
    instructed: Counter = Counter()
    produced: Counter = Counter()
    short: Counter = Counter()
    unanswered: Counter = Counter()
    faults: list[tuple[Hashable, float]] = []  # (task, produced) per instructed fault
    quiet: list[tuple[Hashable, float]] = []  # (task, clean) per uninstructed turn
    for turn in turns:
        kinds = {i.kind: i.params for i in turn.spec.at(turn.index, turn.action) if observable(i.kind)}
        found = detected(turn.text) if turn.text is not None else set()
        for kind, params in sorted(kinds.items()):
            instructed[kind] += 1
            produced[kind] += kind in found
            unanswered[kind] += turn.text is None
            short[kind] += turn.text is not None and kind not in found and not fits(kind, turn.text, params)
            faults.append((turn.task, float(kind in found)))
        if not kinds and turn.text is not None:
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
        "unanswered": {k: n for k, n in sorted(unanswered.items()) if n},
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
