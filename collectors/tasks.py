"""Task suites as YAML data files: load, validate with clear errors, turn into sandbox Tasks."""

import collections
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trajforge.collectors.environments import EnvironmentSpec, KindSpec
from trajforge.collectors.environments.terminal import TerminalSpec
from trajforge.sandboxes.base import Check, PageCheck, ShellCheck, Task, ToolCheck
from trajforge.schemas.actions import payload_text
from trajforge.schemas.records import DOMAINS, Action
from trajforge.schemas.splits import Split, SplitConfig, split_of_task, task_identity
from trajforge.schemas.validation import format_path

SUITES_DIR = Path(__file__).parent / "suites"
FAULTS_DIR = Path(__file__).parent / "faults"


class SuiteError(ValueError):
    """A suite file that cannot be used, with every problem and where it is."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeystrokesSpec(_Spec):
    keystrokes: str
    duration: float = Field(default=0.1, ge=0, le=60)


class ToolCallSpec(_Spec):
    tool: str
    arguments: dict = {}


class BrowserActionSpec(_Spec):
    """A BrowserGym-style action: click(ref), fill(ref, text), select_option, press, scroll, goto(url), go_back."""

    browser: str
    ref: str | None = None
    role: str | None = None
    name: str | None = None
    text: str | None = None
    value: str | None = None
    key: str | None = None
    url: str | None = None
    direction: str | None = None


class TaskSpec(_Spec):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    instruction: str = Field(min_length=1)
    image: str | None = None
    setup: list[str | ToolCallSpec] | None = None
    files: dict[str, str] = {}
    actions: list[str | KeystrokesSpec | ToolCallSpec | BrowserActionSpec] = []
    check: str | ToolCheck | PageCheck | None = None  # a string: a shell command
    vocabulary: list[str] = []
    config: dict = {}


class Defaults(_Spec):
    image: str | None = None
    setup: list[str | ToolCallSpec] = []
    check: str | ToolCheck | PageCheck | None = None
    config: dict = {}


class GeneratedSpec(BaseModel):
    """`{family: NAME, count: N, seed: S, ...}`: N tasks of a family (collectors/families); the other keys are the
    family's parameters."""

    model_config = ConfigDict(extra="allow")
    family: str
    count: int = Field(ge=1, le=100_000)
    seed: int = 0


class SuiteSpec(_Spec):
    suite: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    domain: str
    environment: EnvironmentSpec = TerminalSpec()
    faults: dict | None = None  # fault injection config (sandboxes/faults.py), off when absent
    defaults: Defaults = Defaults()
    tasks: list[TaskSpec] = []
    generated: list[GeneratedSpec] = []

    @model_validator(mode="after")
    def _some_tasks(self):
        if not self.tasks and not self.generated:
            raise ValueError("a suite needs tasks, generated tasks or both")
        return self


@dataclass(frozen=True)
class Suite:
    name: str
    domain: str
    path: Path | None
    tasks: tuple[Task, ...]
    environment: KindSpec = TerminalSpec()
    faults: dict | None = None
    control: dict | None = None  # a control distribution for its simulated episodes (`collect --control`)


def task_split(suite: Suite, task: Task, config: SplitConfig = SplitConfig()) -> Split:
    """The side of the split a suite's task is on: the side build-corpus gives every episode collected of it. The
    key is the task's identity (its instruction and starting files), not the suite's name: the same task in two
    suites is on one side."""
    return split_of_task(task_identity(task.instruction, task.files), task.family, config)


def _action(spec: str | KeystrokesSpec | ToolCallSpec | BrowserActionSpec) -> Action:
    if isinstance(spec, str):
        return Action(kind="shell", content=spec)
    if isinstance(spec, KeystrokesSpec):
        return Action(kind="keystrokes", content=payload_text(spec.model_dump()))
    if isinstance(spec, BrowserActionSpec):
        arguments = spec.model_dump(exclude={"browser"}, exclude_none=True)
        return Action(kind="browser", name=spec.browser, content=payload_text(arguments))
    return Action(kind="tool_call", name=spec.tool, content=payload_text(spec.arguments))


def _setup(spec: str | ToolCallSpec) -> str | Action:
    return spec if isinstance(spec, str) else _action(spec)


def _check(spec: str | ToolCheck | PageCheck | None) -> Check | None:
    return ShellCheck(command=spec) if isinstance(spec, str) else spec


def resolve_suite_path(name_or_path: str) -> Path:
    """A bundled suite by name (`terminal`, `swe`), or a path to a YAML file."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        if not path.is_file():
            raise SuiteError(f"{path}: no such suite file")
        return path
    bundled = SUITES_DIR / f"{name_or_path}.yaml"
    if not bundled.is_file():
        names = ", ".join(sorted(p.stem for p in SUITES_DIR.glob("*.yaml")))
        raise SuiteError(f"unknown suite {name_or_path!r}; bundled suites: {names}; or give a .yaml path")
    return bundled


def load_faults(name_or_path: str) -> dict:
    """A fault injection config: bundled by name (collectors/faults/) or a YAML path; checked before use."""
    from trajforge.sandboxes.faults import FaultConfig

    path = Path(name_or_path) if name_or_path.endswith((".yaml", ".yml")) else FAULTS_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        bundled = ", ".join(sorted(p.stem for p in FAULTS_DIR.glob("*.yaml")))
        raise SuiteError(f"no fault config {name_or_path!r} (bundled: {bundled}; or give a .yaml path)")
    try:
        return FaultConfig.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))).model_dump(
            exclude_none=True
        )
    except (yaml.YAMLError, ValidationError) as exc:
        raise SuiteError(f"{path}: {exc}") from None


def load_suite(name_or_path: str) -> Suite:
    path = resolve_suite_path(name_or_path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SuiteError(f"{path}: not valid YAML: {exc}") from None
    try:
        spec = SuiteSpec.model_validate(raw)
    except ValidationError as exc:
        problems = [f"{path}: {format_path(e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise SuiteError("\n".join(problems)) from None
    problems = []
    if spec.domain not in DOMAINS:
        problems.append(f"{path}: domain: {spec.domain!r} is not one of {', '.join(DOMAINS)}")
    tasks = _written_tasks(spec) + generated_tasks(spec, path)
    ids = collections.Counter(t.id for t in tasks)
    problems += [f"{path}: tasks: duplicate id {i!r}" for i in sorted(i for i, n in ids.items() if n > 1)]
    if problems:
        raise SuiteError("\n".join(problems))
    if problems := _misfits(spec.environment, tasks, path):
        raise SuiteError("\n".join(problems))
    return Suite(spec.suite, spec.domain, path, tasks, spec.environment, spec.faults)


def _written_tasks(spec: SuiteSpec) -> tuple[Task, ...]:
    return tuple(
        Task(
            id=t.id,
            instruction=t.instruction,
            domain=spec.domain,
            image=t.image or spec.defaults.image,
            setup=tuple(_setup(x) for x in (spec.defaults.setup if t.setup is None else t.setup)),
            files=dict(t.files),
            actions=tuple(_action(a) for a in t.actions),
            check=_check(t.check or spec.defaults.check),
            vocabulary=tuple(t.vocabulary),
            config={**spec.defaults.config, **t.config},
        )
        for t in spec.tasks
    )


def generated_tasks(spec: SuiteSpec, path: Path) -> tuple[Task, ...]:
    """The tasks of the suite's `generated:` entries, in order; SuiteError names each entry that cannot be used."""
    from trajforge.collectors.families import FAMILIES
    from trajforge.collectors.families.base import FamilyError, generate

    tasks, problems = [], []
    for i, entry in enumerate(spec.generated):
        where = f"{path}: generated[{i}]"
        try:
            family_class = FAMILIES.get(entry.family)
            family = family_class(family_class.Params.model_validate(entry.model_extra or {}))
        except ValidationError as exc:
            problems += [f"{where}.{format_path(e['loc'])}: {e['msg']}" for e in exc.errors()]
            continue
        except ValueError as exc:  # an unknown family: the message lists the known ones
            problems.append(f"{where}.family: {exc}")
            continue
        if misfit := family.misfit(spec.environment):
            problems.append(f"{where}: {misfit}")
            continue
        try:
            tasks += generate(family, entry.count, entry.seed, spec.domain)
        except FamilyError as exc:
            problems.append(f"{where}: {exc}")
    if problems:
        raise SuiteError("\n".join(problems))
    return tuple(tasks)


def _misfits(environment: KindSpec, tasks: tuple[Task, ...], path: Path) -> list[str]:
    """Setup steps and checks that the suite's kind of environment cannot run."""
    problems = []
    for i, task in enumerate(tasks):
        if any(not isinstance(step, environment.setup_types) for step in task.setup):
            problems.append(f"{path}: tasks[{i}].setup: a {environment.kind} environment cannot run {task.setup!r}")
        if task.check is not None and not isinstance(task.check, environment.check_types):
            problems.append(f"{path}: tasks[{i}].check: a {environment.kind} environment cannot run {task.check!r}")
    return problems
