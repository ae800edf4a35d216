"""Environment kinds: each module of this package is one kind (terminal, mcp, browser, simulated, ...), with its
suite spec and how to build its sandbox. `EnvironmentSpec` is the union of their specs, told apart by `kind`."""

from typing import Annotated, Union

from pydantic import Discriminator, Tag, TypeAdapter, ValidationError

from trajforge.collectors.environments.base import KINDS, KindSpec, Settings
from trajforge.sandboxes.base import Sandbox
from trajforge.schemas.validation import format_path


def _kind(value) -> str:
    return value.get("kind", "terminal") if isinstance(value, dict) else value.kind


EnvironmentSpec = Annotated[
    Union[tuple(Annotated[spec, Tag(name)] for name, spec in sorted(KINDS.items()))],  # noqa: UP007 - built at run time
    Discriminator(_kind),
]
_ADAPTER = TypeAdapter(EnvironmentSpec)


def parse_environment(data: dict, where: str = "environment") -> KindSpec:
    """A suite's `environment:` block, checked; a ValueError names `where` and each problem."""
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        problems = [f"{where}: {format_path(e['loc']) + ': ' if e['loc'] else ''}{e['msg']}" for e in exc.errors()]
        raise ValueError("\n".join(problems)) from None


def build_environment(
    spec: KindSpec, settings: Settings, faults: dict | None = None, seed: int = 0, control: dict | None = None
) -> Sandbox:
    """The sandbox of one episode, wrapped in fault injection when configured; a simulated one steered by a control
    spec sampled for this episode from `control` (a control distribution) when given."""
    env = spec.build(settings)
    if control:
        from trajforge.sandboxes.control import ControlDistribution, ControlledSimulation

        env = ControlledSimulation(env, ControlDistribution.model_validate(control), seed)
    if faults:
        from trajforge.sandboxes.faults import FaultInjector

        env = FaultInjector(env, faults, seed)
    return env


__all__ = ["KINDS", "EnvironmentSpec", "KindSpec", "Settings", "build_environment", "parse_environment"]
