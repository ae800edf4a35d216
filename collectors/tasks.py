"""Task suites as YAML data files: load, validate with clear errors, turn into sandbox Tasks."""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandboxes.base import Task
from schemas.records import DOMAINS, Action
from schemas.validation import format_path

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


class BrowserSpec(_Spec):
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


class ToolCheckSpec(_Spec):
    """Success check for tool environments: call a tool, succeed when its text contains `contains`."""

    tool: str
    arguments: dict = {}
    contains: str = ""


class BrowserCheckSpec(_Spec):
    """Success check for the browser: the current URL and accessibility tree contain these."""

    url_contains: str = ""
    contains: str = ""


class EnvironmentSpec(_Spec):
    """Where a suite's episodes run. terminal: a Docker sandbox; mcp: a bundled `server`, or any server by
    `command`/`args`/`env` (stdio) or `url` (streamable HTTP); browser: a bundled web `app`.

    A stdio MCP server runs in a fresh hardened container per episode (`isolation: container`, the default) with
    no network (`network: none`, the default; `allow` for a server that must reach an API); `isolation: host` runs
    it on the host, as trajforge's user, and is warned about. A `url` server is not isolated by trajforge."""

    kind: Literal["terminal", "mcp", "browser", "simulated"] = "terminal"
    name: str | None = None
    server: str | None = None
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    url: str | None = None
    isolation: Literal["container", "host"] = "container"
    network: Literal["none", "allow"] = "none"
    mounts: list[str] = []  # host folders a stdio server needs, mounted read-only at the same path
    python_packages: list[str] = []  # PyPI requirements of a Python stdio server (installed once, into the cache)
    app: str | None = None
    model: str | None = None  # simulated: the world model's name at `url`
    instruction: str | None = None  # simulated: how the world model should behave


class TaskSpec(_Spec):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    instruction: str = Field(min_length=1)
    image: str | None = None
    setup: list[str | ToolCallSpec] | None = None
    files: dict[str, str] = {}
    actions: list[str | KeystrokesSpec | ToolCallSpec | BrowserSpec] = []
    check: str | ToolCheckSpec | BrowserCheckSpec | None = None
    vocabulary: list[str] = []
    config: dict = {}


class Defaults(_Spec):
    image: str | None = None
    setup: list[str | ToolCallSpec] = []
    check: str | ToolCheckSpec | BrowserCheckSpec | None = None
    config: dict = {}


class SuiteSpec(_Spec):
    suite: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    domain: str
    environment: EnvironmentSpec = EnvironmentSpec()
    faults: dict | None = None  # fault injection config (sandboxes/faults.py), off when absent
    defaults: Defaults = Defaults()
    tasks: list[TaskSpec] = Field(min_length=1)


@dataclass(frozen=True)
class Suite:
    name: str
    domain: str
    path: Path | None
    tasks: tuple[Task, ...]
    environment: dict = field(default_factory=lambda: {"kind": "terminal"})
    faults: dict | None = None


def _action(spec: str | KeystrokesSpec | ToolCallSpec | BrowserSpec) -> Action:
    if isinstance(spec, str):
        return Action(kind="shell", content=spec)
    if isinstance(spec, KeystrokesSpec):
        return Action(kind="keystrokes", content=json.dumps(spec.model_dump()))
    if isinstance(spec, BrowserSpec):
        arguments = spec.model_dump(exclude={"browser"}, exclude_none=True)
        return Action(kind="browser", name=spec.browser, content=json.dumps(arguments, ensure_ascii=False))
    return Action(kind="tool_call", name=spec.tool, content=json.dumps(spec.arguments, ensure_ascii=False))


def _setup(spec: str | ToolCallSpec) -> str | Action:
    return spec if isinstance(spec, str) else _action(spec)


def _check(spec: str | ToolCheckSpec | BrowserCheckSpec | None) -> str | None:
    return spec if spec is None or isinstance(spec, str) else spec.model_dump_json()


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
    from sandboxes.faults import FaultConfig

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
            setup=tuple(_setup(x) for x in (spec.defaults.setup if t.setup is None else t.setup)),
            files=dict(t.files),
            actions=tuple(_action(a) for a in t.actions),
            check=_check(t.check or spec.defaults.check),
            vocabulary=tuple(t.vocabulary),
            config={**spec.defaults.config, **t.config},
        )
        for t in spec.tasks
    )
    environment = spec.environment.model_dump(exclude_defaults=True) | {"kind": spec.environment.kind}
    return Suite(spec.suite, spec.domain, path, tasks, environment, spec.faults)
