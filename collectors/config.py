"""The typed configuration of a collection run (light to import: the CLI builds it before anything runs)."""

from dataclasses import dataclass

from trajforge.collectors.simulation import Simulation
from trajforge.endpoints.model_ref import ModelRef


@dataclass(frozen=True)
class CollectConfig:
    """Everything a collection run is decided by; the defaults of `trajforge collect`."""

    suites: tuple[str, ...] = ("terminal", "swe")  # bundled suite names or .yaml paths
    policy: str = "scripted"  # with an --agent model: llm (an endpoint) or checkpoint (weights), see policy_for
    output: str = "data/raw"  # a folder or a URL; the run goes to OUTPUT/<run-id>/
    run_id: str | None = None  # default: derived from the config, so the same command resumes
    repeats: int = 1
    concurrency: int = 2
    shard: str = "0/1"
    retries: int = 2
    max_turns: int = 30
    command_timeout: float = 10.0
    tasks: tuple[str, ...] = ()  # only these task ids
    image: str | None = None  # default: the sandbox base image, built if missing
    seed: int = 0
    explorer_steps: int = 8
    # the model of the llm policy (URL=MODEL) or the checkpoint policy (a folder, smollm2): --agent
    agent: ModelRef | None = None
    temperature: float = 0.7  # the llm and checkpoint policies' sampling temperature; 0 is greedy
    flush_every: int = 8
    faults: str | None = None  # a bundled fault config or a YAML path
    simulation: Simulation | None = None  # a world model standing in for every environment (None: the real ones)
    verify_generated: bool = False  # first run every generated task's scripted solution; refuse the run if one fails

    def __post_init__(self):
        if self.agent is not None and self.policy not in MODEL_POLICIES:  # the model's own policy
            object.__setattr__(self, "policy", policy_for(self.agent))


AGENT_KEY_ENV = "TRAJFORGE_AGENT_API_KEY"  # the default variable holding an endpoint agent's API key
MODEL_POLICIES = ("llm", "checkpoint")  # the policies an --agent model acts through


def policy_for(agent: ModelRef) -> str:
    """The policy a model acts through: llm for an endpoint, checkpoint for weights."""
    return "llm" if agent.endpoint is not None else "checkpoint"
