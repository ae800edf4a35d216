"""The typed config of `train agent-rl` (light to import: the CLI builds it before anything runs)."""

from dataclasses import asdict, dataclass, field

from trajforge.collectors.config import CollectConfig
from trajforge.schemas.splits import SplitConfig
from trajforge.training.configs import GSPOConfig, refuse_unknown, take, with_gspo

AGENT_RL = "agent-rl"


@dataclass(frozen=True)
class AgentRLConfig:
    """Multi-turn GSPO over whole episodes in real environments (or, with `simulate`, in a world model), from a
    checkpoint that can act (`init`)."""

    suites: tuple[str, ...] = ("terminal",)  # bundled suite names or .yaml paths: their training-split tasks
    output: str = "runs/agent-rl"
    init: str | None = None
    tasks_per_step: int = 2
    max_turns: int = 8
    # G episodes per task, max_new_tokens per answer; one update per batch, two episodes per forward and backward
    gspo: GSPOConfig = GSPOConfig(updates_per_batch=1, micro_batch=2)
    guide: str = "none"  # scripted: a group whose episodes all failed gets the task's scripted episode (guidance.py)
    max_steps: int = 20
    save_every: int = 10
    seed: int = 0
    concurrency: int = 8  # episodes at once (a step's groups together): their answers share a batch
    command_timeout: float = 10.0
    image: str | None = None  # default: the sandbox base image
    split: SplitConfig = field(default_factory=SplitConfig)  # which tasks are held out: never trained on
    report_to: str = "none"  # where metrics.jsonl's lines also go: none or tensorboard (training/metrics_log.py)
    simulate: str | None = None  # episodes in a world model instead: a checkpoint, or URL=MODEL (collect --simulate)
    # how the world model is asked and decides a check, as collect --simulate is given them (its defaults)
    simulate_prompt: str = CollectConfig.simulate_prompt
    simulate_file_check: str = CollectConfig.simulate_file_check  # content or exit-code
    simulate_max_tokens: int = CollectConfig.simulate_max_tokens  # the most tokens written for one observation
    simulate_key_env: str = CollectConfig.simulate_key_env
    control: str | None = None  # with simulate: a control preset or YAML, a spec sampled per episode (collect's)
    sim_check_corpus: str | None = None  # with simulate: the world model's single-step figures on its held-out turns
    min_exact_match: float = 0.8  # below it (single-step exact match) the run warns before it trains
    audit_every: int = 0  # with simulate: every N steps, the step's episodes replayed for real (agents/reward_audit.py)

    def as_dict(self) -> dict:
        return asdict(self)


def agent_rl_config(**flags) -> AgentRLConfig:
    """The config from `trajforge train agent-rl` flags (None or empty: not given, so the config's default holds); a
    flag that is none of its settings is a ValueError naming it. The split flags are build-corpus's and agent-eval's
    (--held-out, --split-seed, --held-out-family), so the tasks agent RL trains on are never the ones they hold
    out."""
    given = {name: value for name, value in flags.items() if value is not None and value != []}
    if "suite" in given:
        given["suites"] = tuple(given.pop("suite"))
    split = SplitConfig(
        held_out=given.pop("split_held_out", SplitConfig.held_out),
        seed=given.pop("split_seed", SplitConfig.seed),
        held_out_families=tuple(given.pop("held_out_family", ())),
    )
    gspo = with_gspo(AgentRLConfig.gspo, given)
    known = take(AgentRLConfig, given)
    refuse_unknown(AGENT_RL, given)
    return AgentRLConfig(**known, gspo=gspo, split=split)
