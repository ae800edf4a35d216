"""The typed config of `train --stage agent-rl` (light to import: the CLI builds it before anything runs)."""

from dataclasses import asdict, dataclass, field, fields

from trajforge.collectors.simulation import WORLD_MODEL_KEY_ENV, Simulation, simulation
from trajforge.schemas.splits import SplitConfig
from trajforge.training.configs import EPS_HIGH, EPS_LOW

AGENT_RL = "agent-rl"


@dataclass(frozen=True)
class AgentRLConfig:
    """Multi-turn GSPO over whole episodes in real environments (or, with `simulation`, in a world model), from a
    checkpoint that can act (`init`)."""

    suites: tuple[str, ...] = ("terminal",)  # bundled suite names or .yaml paths: their training-split tasks
    output: str = "runs/agent-rl"
    init: str | None = None
    group_size: int = 4  # episodes per task (G)
    tasks_per_step: int = 2
    max_turns: int = 8
    max_new_tokens: int = 128  # per answer
    temperature: float = 1.0
    updates_per_batch: int = 1
    groups_per_update: int = 1  # task groups per optimizer step (0: a step's groups all in one)
    micro_batch: int = 2  # episodes per forward and backward (0: a group's all at once); the update is the same
    lr: float = 1e-5  # constant: no warmup, no decay
    clip: float = 1.0
    eps_low: float = EPS_LOW
    eps_high: float = EPS_HIGH
    guide: str = "none"  # scripted: a group whose episodes all failed gets the task's scripted episode (guidance.py)
    kl_coef: float = 0.0  # weight of the KL to the starting model (0: no reference model is kept)
    max_steps: int = 20
    save_every: int = 10
    seed: int = 0
    concurrency: int = 8  # episodes at once (a step's groups together): their answers share a batch
    command_timeout: float = 10.0
    image: str | None = None  # default: the sandbox base image
    split: SplitConfig = field(default_factory=SplitConfig)  # which tasks are held out: never trained on
    degenerate_warning: float = 0.9
    report_to: str = "none"  # where metrics.jsonl's lines also go: none or tensorboard (training/metrics_log.py)
    simulation: Simulation | None = None  # every episode in a world model instead (collect --world-model's)
    sim_check_corpus: str | None = None  # with simulate: the world model's single-step figures on its held-out turns
    min_exact_match: float = 0.8  # below it (single-step exact match) the run warns before it trains
    audit_every: int = 0  # with simulate: every N steps, the step's episodes replayed for real (agents/reward_audit.py)

    def as_dict(self) -> dict:
        return asdict(self)


def agent_rl_config(**flags) -> AgentRLConfig:
    """The config from `trajforge train` flags (None or empty: not given); flags it has no use for are left out. The
    split flags are build-corpus's and agent-eval's (--held-out, --split-seed, --held-out-family), so the tasks
    agent RL trains on are never the ones they hold out."""
    given = {name: value for name, value in flags.items() if value is not None and value != []}
    given["simulation"] = simulation(
        given.pop("world_model", None), given.pop("world_model_key_env", WORLD_MODEL_KEY_ENV),
        **{name: given.pop(f"simulate_{name}", None) for name in ("prompt", "file_check", "max_tokens")},
        control=given.pop("control", None),
    )  # fmt: skip
    if "suite" in given:
        given["suites"] = tuple(given.pop("suite"))
    split = SplitConfig(
        held_out=given.pop("split_held_out", SplitConfig.held_out),
        seed=given.pop("split_seed", SplitConfig.seed),
        held_out_families=tuple(given.pop("held_out_family", ())),
    )
    names = {f.name for f in fields(AgentRLConfig)}
    return AgentRLConfig(**{name: value for name, value in given.items() if name in names}, split=split)
