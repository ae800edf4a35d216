"""What every environment kind provides: its suite spec (one variant of `EnvironmentSpec`), how to build its
sandbox, and what a run must know or prepare before its first episode. A kind registers itself in `KINDS`
(`@KINDS.register()`, under the name its `kind` field takes), which imports every module of this package, so adding
a kind is one module (plus its test)."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from trajforge.sandboxes.base import Sandbox
from trajforge.schemas.registry import Registry

KINDS: Registry[type["KindSpec"]] = Registry(
    "environment kind",
    name_of=lambda spec: spec.model_fields["kind"].default,
    package="trajforge.collectors.environments",
)


@dataclass(frozen=True)
class Settings:
    """What the command line decides for every environment of a run."""

    run_id: str = "adhoc"
    image: str | None = None  # the sandbox image: the terminal's, and the isolated MCP servers'
    command_timeout: float = 10.0
    docker_client: object = None


class KindSpec(BaseModel):
    """The `environment:` block of a suite, for one kind. Subclasses set `kind: Literal["<name>"]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str
    # What a task of this kind may hold: setup steps (shell commands `str`, or tool calls `Action`) and its check.
    setup_types: ClassVar[tuple[type, ...]] = ()
    check_types: ClassVar[tuple[type, ...]] = ()

    def build(self, settings: Settings) -> Sandbox:
        raise NotImplementedError

    def needs_docker(self) -> bool:
        """Whether its episodes need the Docker daemon and the sandbox image."""
        return False

    def simulated_action_space(self) -> list[dict]:
        """The action space a world model standing in for this environment offers (`collect --simulate`)."""
        return []

    def prepare(self, settings: Settings, log: Callable[[str], None]) -> str | None:
        """Work before the first episode (e.g. install server packages); the reason when it failed, else None."""
        return None

    @classmethod
    def run_notes(cls, specs: Mapping[str, "KindSpec"]) -> tuple[dict, list[str]]:
        """For this kind's suites ({suite name: spec}): what the run's manifest records, and warnings to print."""
        return {}, []
