"""The typed config of `train agent-rl` (light to import: the CLI builds it before anything runs)."""

from dataclasses import asdict, dataclass, field, replace

from trajforge.collectors.config import CollectConfig
from trajforge.collectors.simulation import WORLD_MODEL_KEY_ENV, simulation
from trajforge.endpoints.model_ref import parse_model
from trajforge.schemas.splits import SplitConfig
from trajforge.training.configs import GSPOConfig, refuse_unknown, take, with_gspo

AGENT_RL = "agent-rl"


@dataclass(frozen=True)
class AgentRLConfig:
    """Multi-turn GSPO over whole episodes in real environments (or, with `simulation`, in a world model), from a
    checkpoint that can act (`init`)."""

    output: str = "runs/agent-rl"
    init: str | None = None
    # the episodes, as a collect run has them: the suites (their training-split tasks), turns, episodes at once (a
    # step's groups together: their answers share a batch), the environments' settings, the seed, the simulation
    run: CollectConfig = CollectConfig(suites=("terminal",), concurrency=8, max_turns=8)
    tasks_per_step: int = 2
    # G episodes per task, max_new_tokens per answer; one update per batch, two episodes per forward and backward
    gspo: GSPOConfig = GSPOConfig(updates_per_batch=1, micro_batch=2)
    # a group whose episodes all failed gets the task's scripted episode: scripted (a demonstration step inside the
    # GSPO update) or scripted-weighted (importance-weighted against the scripted policy); agents/guidance.py
    guide: str = "none"
    max_steps: int = 20
    save_every: int = 10
    split: SplitConfig = field(default_factory=SplitConfig)  # which tasks are held out: never trained on
    report_to: str = "none"  # where metrics.jsonl's lines also go: none or tensorboard (training/metrics_log.py)
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
    if "init" in given:  # the agent to train: weights (a checkpoint folder, a Hugging Face model folder, smollm2)
        parse_model(given["init"], "--init", weights_only=True)
    if "min_exact_match" in given and "sim_check_corpus" not in given:
        raise ValueError("--min-exact-match: the figures it warns on are measured on --sim-check-corpus; give it")
    if "world_model_key_env" in given and not str(given.get("world_model", "")).startswith(("http://", "https://")):
        raise ValueError("--world-model-key-env: only a --world-model endpoint (URL=MODEL) has a key")
    given["simulation"] = simulation(
        given.pop("world_model", None), given.pop("world_model_key_env", WORLD_MODEL_KEY_ENV),
        **{name: given.pop(f"simulate_{name}", None) for name in ("prompt", "max_tokens")},
        control=given.pop("control", None),
    )  # fmt: skip
    if "suite" in given:
        given["suites"] = tuple(given.pop("suite"))
    split = SplitConfig(
        held_out=given.pop("split_held_out", SplitConfig.held_out),
        seed=given.pop("split_seed", SplitConfig.seed),
        held_out_families=tuple(given.pop("held_out_family", ())),
    )
    gspo = with_gspo(AgentRLConfig.gspo, given)  # first: --temperature is the policy's sampling temperature
    known = take(AgentRLConfig, given)  # then --output is the run folder
    run = replace(AgentRLConfig.run, **take(CollectConfig, given))  # the episodes' settings, the simulation
    refuse_unknown(AGENT_RL, given)
    return AgentRLConfig(**known, run=run, gspo=gspo, split=split)
