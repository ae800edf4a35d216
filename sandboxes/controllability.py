"""Controllability, measured on episodes that record their control spec (sandboxes/control.py): of the faults a
world model was instructed to show, the share it produced (a detector per fault kind reads each predicted
observation, sandboxes/fault_kinds.py), and of the turns it was told nothing about, the share where it produced
none. Latency leaves no trace in text: it is applied by the environment, never scored here, and a turn whose
only instruction is latency counts as uninstructed. So does a turn whose instructed fault its answer could not show
(truncation of an output no longer than the cut, as a real truncation never happens): counted under
`not_applicable`, by kind."""

from collections import Counter
from collections.abc import Iterable

from trajforge.sandboxes.control import ControlSpec, recorded_control
from trajforge.sandboxes.fault_kinds import FAULT_KINDS, detected, fits, observable
from trajforge.schemas.records import Action, Trajectory


def controllability(records: Iterable[Trajectory]) -> dict:
    """Over the episodes of `records` that record a control spec (the others are not counted)."""
    episodes = [(spec, r) for r in records if (spec := recorded_control(r.metadata)) is not None]
    turns = ((spec, t.index, t.action, t.observation.content) for spec, r in episodes for t in r.turns)
    return {"episodes": len(episodes), **turn_controllability(turns)}


def turn_controllability(turns: Iterable[tuple[ControlSpec, int, Action, str]]) -> dict:
    """Over (the episode's spec, the turn's index, its action, the observation shown) of single turns."""
    instructed: Counter = Counter()
    produced: Counter = Counter()
    unfit: Counter = Counter()
    uninstructed = quiet = 0
    for spec, index, action, text in turns:
        told = [i for i in spec.at(index, action) if observable(i.kind)]
        kinds = {i.kind for i in told if fits(i.kind, text, i.params)}
        unfit.update({i.kind for i in told} - kinds)
        found = detected(text)
        for kind in kinds:
            instructed[kind] += 1
            produced[kind] += kind in found
        if not kinds:
            uninstructed += 1
            quiet += not found
    total = sum(instructed.values())
    return {
        "instructed_faults": total,
        "produced_share": sum(produced.values()) / total if total else None,
        "per_kind": {k: {"instructed": n, "produced": produced[k]} for k, n in sorted(instructed.items())},
        "not_applicable": dict(sorted(unfit.items())),
        "uninstructed_turns": uninstructed,
        "clean_share": quiet / uninstructed if uninstructed else None,
        "not_scored": sorted(k for k in FAULT_KINDS if not observable(k)),
    }
