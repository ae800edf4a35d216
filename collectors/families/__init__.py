"""Task families: a family turns a seed into many tasks of one kind, each with an instruction, its files or setup,
a scripted solution (the task's `actions`) and a check in its suite's environment. Each module of this package is
one family, registered in FAMILIES; a suite declares `generated: [{family: NAME, count: N, seed: S, ...params}]`."""

from trajforge.schemas.registry import Registry

FAMILIES = Registry("task family", name_of=lambda family: family.name, package="trajforge.collectors.families")
