"""The trajectory record of the data contract (docs/design.md, "Data contract (v1)") as typed Python records.

Free-form JSON (tool arguments, action spaces, metadata) travels as JSON *strings*, so the Arrow schema stays
explicit and never depends on what the first batch happened to contain.
"""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from trajforge.schemas.hashing import canonical_json, content_hash
from trajforge.schemas.version import SCHEMA_VERSION

Domain = Literal["terminal", "swe", "mcp", "search", "web", "os", "android", "other"]
ActionKind = Literal["shell", "keystrokes", "tool_call", "browser", "message"]
ObservationFormat = Literal["text", "json", "aria", "html"]
SourceKind = Literal["collected", "imported", "simulated", "knowledge"]  # knowledge: a CPT document
# infra_error and timeout are the environment's fault, task_error the task's (its setup failed), never the agent's:
# they never become training targets.
OutcomeStatus = Literal["success", "failure", "agent_error", "infra_error", "task_error", "timeout", "unknown"]

DOMAINS: tuple[str, ...] = Domain.__args__
SYSTEM_PROMPT_PARTS = (
    "task_description",
    "action_space",
    "initial_state",
    "demonstrations",
    "simulation_instruction",
)


class _Record(BaseModel):
    # strict: "3" is not an int; forbid: an unknown field is reported, never dropped.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Action(_Record):
    kind: ActionKind
    name: str | None = None
    content: str = Field(description="text, or a JSON string for tool_call/browser arguments")


class Observation(_Record):
    content: str
    format: ObservationFormat = "text"
    exit_code: int | None = None
    is_error: bool = False
    truncated: bool = False
    metadata: str | None = Field(default=None, description="JSON string: cwd, url, title, ...")


class Turn(_Record):
    index: int = Field(ge=0)
    action: Action
    observation: Observation
    latency_ms: float | None = None
    fault: str | None = Field(default=None, description="label of an injected fault, if any")
    no_change: bool | None = Field(default=None, description="state identical before and after the action")
    loss_weight: float | None = Field(
        default=None, description="weight given by the source (e.g. a chat file); None lets masking decide"
    )


class Source(_Record):
    kind: SourceKind
    by: str = Field(description="collector, importer or simulator that produced the record")
    run_id: str | None = None
    origin: str | None = Field(default=None, description="original file, id or URL")


class Environment(_Record):
    name: str
    version: str | None = None
    image_digest: str | None = None
    backend: str | None = None


class Agent(_Record):
    name: str
    model: str | None = None


class Outcome(_Record):
    status: OutcomeStatus = "unknown"
    reward: float | None = None
    verifier: str | None = Field(default=None, description="JSON string: the verifier's result")
    error: str | None = None


class Trajectory(_Record):
    schema_version: str = SCHEMA_VERSION
    trajectory_id: str
    domain: Domain
    source: Source
    environment: Environment
    task_description: str = ""
    action_space: str = Field(default="[]", description="JSON string: tool schemas or an action grammar")
    initial_state: str = ""
    demonstrations: str = ""
    simulation_instruction: str = ""
    agent: Agent
    turns: list[Turn]
    outcome: Outcome = Outcome()
    started_at: datetime | None = Field(default=None, strict=False)
    ended_at: datetime | None = Field(default=None, strict=False)
    metadata: str | None = Field(default=None, description="JSON string for what a source has beyond the contract")

    def content_id(self) -> str:
        """trajectory_content_id of the record, read from its fields (no dump of the whole record)."""
        turns = [
            [t.action.kind, t.action.name, t.action.content, t.observation.content, t.observation.format]
            for t in self.turns
        ]
        parts = {part: getattr(self, part) for part in SYSTEM_PROMPT_PARTS}
        return _content_hash(self.domain, self.environment.name, parts, turns)

    def with_content_id(self) -> "Trajectory":
        return self.model_copy(update={"trajectory_id": self.content_id()})


def trajectory_content_id(record: dict) -> str:
    """Stable id from what the trajectory *is*: environment, system prompt and turns; not when or by whom."""
    turns = [
        [
            t["action"]["kind"],
            t["action"].get("name"),
            t["action"]["content"],
            t["observation"]["content"],
            t["observation"].get("format", "text"),
        ]
        for t in record["turns"]
    ]
    parts = {part: record.get(part, "") for part in SYSTEM_PROMPT_PARTS}
    return _content_hash(record["domain"], record["environment"]["name"], parts, turns)


def _content_hash(domain: str, environment: str, parts: dict[str, str], turns: list[list]) -> str:
    return content_hash(canonical_json({"domain": domain, "environment": environment, **parts, "turns": turns}))


def new_trajectory(**fields) -> Trajectory:
    """Build a trajectory and give it its content id; nested parts may be given as dicts."""
    fields.setdefault("trajectory_id", "")
    return Trajectory.model_validate(fields, strict=False).with_content_id()
