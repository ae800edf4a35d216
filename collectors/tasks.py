"""Task suites as YAML data files: load, validate with clear errors, turn into sandbox Tasks."""

import json
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandboxes.base import Task
from schemas.records import DOMAINS, Action
from schemas.validation import format_path

SUITES_DIR = Path(__file__).parent / "suites"


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


class TaskSpec(_Spec):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    instruction: str = Field(min_length=1)
    image: str | None = None
    setup: list[str] | None = None
    files: dict[str, str] = {}
    actions: list[str | KeystrokesSpec | ToolCallSpec] = []
    check: str | None = None
    vocabulary: list[str] = []
    config: dict = {}


class Defaults(_Spec):
    image: str | None = None
    setup: list[str] = []
    check: str | None = None
    config: dict = {}


class SuiteSpec(_Spec):
    suite: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    domain: str
    defaults: Defaults = Defaults()
    tasks: list[TaskSpec] = Field(min_length=1)


@dataclass(frozen=True)
class Suite:
    name: str
    domain: str
    path: Path
    tasks: tuple[Task, ...]


def _action(spec: str | KeystrokesSpec | ToolCallSpec) -> Action:
    if isinstance(spec, str):
        return Action(kind="shell", content=spec)
    if isinstance(spec, KeystrokesSpec):
        return Action(kind="keystrokes", content=json.dumps(spec.model_dump()))
    return Action(kind="tool_call", name=spec.tool, content=json.dumps(spec.arguments, ensure_ascii=False))


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
    ids = [t.id for t in spec.tasks]
    problems += [f"{path}: tasks: duplicate id {i!r}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    if problems:
        raise SuiteError("\n".join(problems))
    tasks = tuple(
        Task(
            id=t.id,
            instruction=t.instruction,
            domain=spec.domain,
            image=t.image or spec.defaults.image,
            setup=tuple(spec.defaults.setup if t.setup is None else t.setup),
            files=dict(t.files),
            actions=tuple(_action(a) for a in t.actions),
            check=t.check or spec.defaults.check,
            vocabulary=tuple(t.vocabulary),
            config={**spec.defaults.config, **t.config},
        )
        for t in spec.tasks
    )
    return Suite(spec.suite, spec.domain, path, tasks)
