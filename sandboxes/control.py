"""Control of a simulated environment, per episode (the paper's controllability, §6.2): a control spec says which
faults to inject where (which action, optionally only when it calls one of some tools) with what parameters; a
control distribution says how often, and one spec is sampled from it per episode with the episode's seed. The spec
is rendered into the episode's `simulation_instruction` and recorded in its metadata (`control`), so a world model
is told what to produce and the record says what it was told. A real fault-injected episode (sandboxes/faults.py)
records what was injected where as a spec of the same kind, rendered in the same words.

Distribution file (YAML), or a preset name (CONTROL_PRESETS):

    horizon: 12        # the sampled plan covers actions 1..12
    clean: 0.2         # share of episodes with no faults at all
    faults:            # kind -> {rate: share of actions, tools: [...], turns: [first, last], and its parameters}
      intermittent_error: {rate: 0.15}
      pagination: {rate: 0.3, page_size: 3, tools: [list_issues]}
"""

import random
import time
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trajforge.sandboxes.base import Sandbox, Task, WrappedSandbox
from trajforge.sandboxes.fault_kinds import FAULT_KINDS, can_hit
from trajforge.schemas.control_record import CONTROL_KEY, control_record
from trajforge.schemas.records import Action, Observation
from trajforge.schemas.registry import Registry, UnknownName
from trajforge.schemas.validation import format_path

PARAMETERS = ("page_size", "seconds", "max_chars")


class ControlError(ValueError):
    """A control file or preset that cannot be used; the message names the file and the key."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Injection(_Model):
    kind: str
    turn: int = Field(ge=0, description="the action's index in the episode, from 0 (rendered from 1)")
    tools: tuple[str, ...] = ()  # only when the action calls one of these tools
    params: dict[str, float | int] = {}

    @field_validator("kind")
    @classmethod
    def _a_known_kind(cls, kind: str) -> str:
        FAULT_KINDS.get(kind)  # UnknownName (a ValueError) lists the known kinds
        return kind

    def render(self) -> str:
        where = f"action {self.turn + 1}" + (f" (if it calls {' or '.join(self.tools)})" if self.tools else "")
        return f"{where} {FAULT_KINDS.get(self.kind).phrase(self.params)}"


class ControlSpec(_Model):
    """The faults of one episode, by action."""

    injections: tuple[Injection, ...] = ()

    def at(self, turn: int, action: Action | None = None) -> list[Injection]:
        """The injections for the action at `turn` (those restricted to tools: when `action` calls one; given an
        action, only those that can hit its kind)."""
        return [
            i
            for i in self.injections
            if i.turn == turn
            and (not i.tools or (action is not None and action.name in i.tools))
            and (action is None or can_hit(i.kind, action.kind))
        ]

    def before(self, turn: int) -> "ControlSpec":
        """The injections at the actions before `turn`: what an episode that took `turn` actions was given."""
        return ControlSpec(injections=tuple(i for i in self.injections if i.turn < turn))

    def render(self) -> str:
        """The spec as the simulation instruction says it; '' for no faults (the environment as it is)."""
        if not self.injections:
            return ""
        lines = "; ".join(i.render() for i in sorted(self.injections, key=lambda i: (i.turn, i.kind)))
        return f"Inject these faults: {lines}. Every other action is answered normally."

    def record(self) -> dict:
        return {"injections": [i.model_dump(exclude_defaults=True) for i in self.injections]}

    @classmethod
    def from_record(cls, record: dict | None) -> "ControlSpec":
        return cls.model_validate(record or {})


class FaultRate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    rate: float = Field(ge=0, le=1)
    tools: tuple[str, ...] = ()
    turns: tuple[int, int] | None = None  # first and last action (from 1) it may hit
    page_size: int | None = Field(None, ge=1)
    seconds: float | None = Field(None, ge=0, le=30)
    max_chars: int | None = Field(None, ge=1)


class ControlDistribution(_Model):
    horizon: int = Field(12, ge=1, le=1000)
    clean: float = Field(0.0, ge=0, le=1)
    faults: dict[str, FaultRate] = {}

    def sample(self, seed: int, task_id: str = "", actions: frozenset[str] | None = None) -> ControlSpec:
        """One episode's spec: reproducible from (seed, task); at most one fault of each kind per action; only
        kinds that can hit one of `actions` (the environment's action kinds; None: any kind)."""
        rng = random.Random(f"control:{seed}:{task_id}")
        if rng.random() < self.clean:
            return ControlSpec()
        injections = []
        for turn in range(self.horizon):
            for kind, fault in self.faults.items():
                first, last = fault.turns or (1, self.horizon)
                possible = actions is None or any(can_hit(kind, a) for a in actions)
                if rng.random() < fault.rate and first <= turn + 1 <= last and possible:
                    params = {p: getattr(fault, p) for p in PARAMETERS if getattr(fault, p) is not None}
                    injections.append(Injection(kind=kind, turn=turn, tools=fault.tools, params=params))
        return ControlSpec(injections=tuple(injections))


CONTROL_PRESETS: Registry[dict] = Registry("control preset")
CONTROL_PRESETS.add(
    "unreliable",
    {
        "horizon": 12,
        "clean": 0.2,
        "faults": {
            "intermittent_error": {"rate": 0.15},
            "pagination": {"rate": 0.2, "page_size": 3},
            "incomplete": {"rate": 0.1},
            "partial_failure": {"rate": 0.1},
            "latency": {"rate": 0.1, "seconds": 0.05},
            "truncation": {"rate": 0.05, "max_chars": 400},
        },
    },
    help="every fault kind, as `--faults unreliable` injects them for real",
)
CONTROL_PRESETS.add(
    "errors",
    {"horizon": 12, "clean": 0.2, "faults": {"intermittent_error": {"rate": 0.25}}},
    help="intermittent errors only, one action in four",
)
CONTROL_PRESETS.add(
    "lists",
    {"horizon": 12, "clean": 0.2, "faults": {"pagination": {"rate": 0.3, "page_size": 2}, "incomplete": {"rate": 0.1}}},
    help="paginated and incomplete list results",
)


def parse_control(data: object, where: str) -> ControlDistribution:
    """A distribution from parsed YAML; ControlError names `where` and the key of each problem."""
    if not isinstance(data, dict):
        raise ControlError(f"{where}: a control distribution is a mapping (horizon, clean, faults)")
    unknown = [k for k in (data.get("faults") or {}) if k not in FAULT_KINDS]
    if unknown:
        problems = [f"{where}: faults.{k}: unknown fault kind {k!r}; known: {', '.join(FAULT_KINDS)}" for k in unknown]
        raise ControlError("\n".join(problems))
    try:
        return ControlDistribution.model_validate(data)
    except ValidationError as exc:
        problems = [f"{where}: {format_path(e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise ControlError("\n".join(problems)) from None


def load_control(name_or_path: str) -> ControlDistribution:
    """A preset by name or a YAML file; ControlError (one line per problem, naming file and key)."""
    if not name_or_path.endswith((".yaml", ".yml")):
        try:
            return parse_control(CONTROL_PRESETS.get(name_or_path), f"control preset {name_or_path!r}")
        except UnknownName as exc:
            raise ControlError(f"{exc}; or give a .yaml path") from None
    path = Path(name_or_path)
    if not path.is_file():
        raise ControlError(f"{path}: no such control file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ControlError(f"{path}: not valid YAML: {exc}") from None
    return parse_control(data, str(path))


def action_kinds(action_space: list[dict]) -> frozenset[str] | None:
    """The action kinds an environment offering `action_space` takes (the terminal's tools are named for their
    kinds); None when the action space is not known."""
    from trajforge.sandboxes.browser import browser_actions_in
    from trajforge.schemas.actions import INFO_KINDS

    names = {tool.get("name") for tool in action_space}
    if not names:
        return None
    browser = browser_actions_in(action_space)
    kinds = {INFO_KINDS[n] for n in names if n in INFO_KINDS} | ({"browser"} if browser else set())
    return frozenset(kinds | ({"tool_call"} if names - INFO_KINDS.keys() - browser else set()))


class ControlledSimulation(WrappedSandbox):
    """A simulated environment steered per episode: at reset a spec is sampled from the distribution (with the
    episode's seed; only faults that can hit the environment's actions) and recorded. Each action is simulated
    under the spec's faults up to it, rendered into the `simulation_instruction` the simulator puts in its system
    prompt: a real episode's instruction never names an action past its last, and a world model told of a fault at
    action 12 puts one at action 1. So the task's check, asked after the last action, is asked under the faults of
    the actions taken, as a real check turn is recorded. Latency, which no text shows, is applied here."""

    def __init__(self, env: Sandbox, distribution: ControlDistribution, seed: int = 0):
        super().__init__(env)
        self.distribution, self.seed = distribution, seed
        self.spec, self._turn, self._base = ControlSpec(), 0, ""

    def reset(self, task: Task) -> Observation:
        actions = action_kinds(self.env.action_space())
        self.spec, self._turn = self.distribution.sample(self.seed, task.id, actions), 0
        self._base = task.config.get("simulation_instruction", "")
        return self.env.reset(task)

    def _instruction(self, spec: ControlSpec) -> str:
        return " ".join(x for x in (self._base, spec.render()) if x)

    def step(self, action: Action) -> Observation:
        for injection in self.spec.at(self._turn, action):
            if injection.kind == "latency":
                time.sleep(float(injection.params.get("seconds", 0.0)))
        self._turn += 1
        self.env.instruct(self._instruction(self.spec.before(self._turn)))
        return self.env.step(action)

    def episode_metadata(self) -> dict:
        return {**self.env.episode_metadata(), CONTROL_KEY: self.spec.record()}


def recorded_control(metadata: str | None) -> ControlSpec | None:
    """The control spec a trajectory's metadata records, or None when it records none."""
    record = control_record(metadata)
    return None if record is None else ControlSpec.from_record(record)
