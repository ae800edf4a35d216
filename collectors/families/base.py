"""What every task family is: typed parameters, one environment it fits, and `draft(rng)`, one task drawn at random.
`generate` turns drafts into distinct Tasks whose ids are derived from their instruction, so two tasks told the same
way share one id; the split hashes the task's instruction and starting files (schemas/splits.py task_identity),
whatever suite holds it: a held-out task is never a training task in another suite."""

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from trajforge.sandboxes.base import Check, Task
from trajforge.schemas.records import Action

DRAWS_PER_TASK = 20  # how many drafts a family may spend per distinct task before it is said to be too small


class FamilyError(ValueError):
    """Generation cannot give what was asked (e.g. fewer distinct tasks than `count`)."""


class FamilyParams(BaseModel):
    """A family's parameters, as a suite's `generated:` entry gives them (unknown names are refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Draft:
    """One generated task before it has an id: what the agent is told and given, how it is solved and checked."""

    instruction: str
    actions: tuple[Action, ...]
    check: Check
    files: dict[str, str] = field(default_factory=dict)
    setup: tuple[str | Action, ...] = ()
    vocabulary: tuple[str, ...] = ()


class Family(ABC):
    name: ClassVar[str]
    kind: ClassVar[str]  # the environment kind it runs in (terminal, mcp, ...)
    server: ClassVar[str | None] = None  # for an MCP family: the bundled server it needs
    Params: ClassVar[type[FamilyParams]] = FamilyParams

    def __init__(self, params: FamilyParams):
        self.params = params

    @abstractmethod
    def draft(self, rng: random.Random) -> Draft:
        """One task, drawn with `rng` (the only source of randomness, so a seed gives the same tasks)."""

    def misfit(self, environment) -> str | None:
        """Why a suite's environment (a KindSpec) cannot run this family's tasks; None when it can."""
        wanted, given = (self.kind, self.server), (environment.kind, getattr(environment, "server", None))
        if given != wanted:
            return f"family {self.name!r} runs in {_environment(*wanted)}, not in {_environment(*given)}"
        return None


def _environment(kind: str, server: str | None) -> str:
    return f"a {kind} environment" + (f" with the {server} server" if server else "")


def content_key(draft: Draft) -> str:
    """What makes two tasks one task: the instruction. A family's instruction names every file, word and number its
    solution uses, so two tasks told alike (whatever their files or setup) are solved alike: one task, not two."""
    return draft.instruction


def generate(family: Family, count: int, seed: int, domain: str) -> tuple[Task, ...]:
    """`count` distinct tasks of `family` from `seed`; FamilyError if it cannot draw that many distinct ones."""
    rng = random.Random(f"{family.name}\x1f{seed}")
    drafts: dict[str, Draft] = {}
    for _ in range(count * DRAWS_PER_TASK):
        if len(drafts) == count:
            break
        draft = family.draft(rng)
        drafts.setdefault(content_key(draft), draft)
    if len(drafts) < count:
        raise FamilyError(f"family {family.name!r} gave only {len(drafts)} distinct tasks of the {count} asked")
    return tuple(_task(family.name, key, draft, domain) for key, draft in drafts.items())


def _task(family: str, key: str, draft: Draft, domain: str) -> Task:
    digest = blake2b(key.encode(), digest_size=6).hexdigest()
    return Task(
        id=f"{family}-{digest}",
        instruction=draft.instruction,
        domain=domain,
        setup=draft.setup,
        files=dict(draft.files),
        actions=draft.actions,
        check=draft.check,
        vocabulary=draft.vocabulary,
        family=family,
    )
