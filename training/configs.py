"""The trainer's typed configs: one per stage (CPTConfig, SFTConfig, AgentSFTConfig, RLConfig), the loop and
model that CPT, SFT and agent SFT share, and the GSPO settings that RL and agent RL (agents/config.py) share. Each
owns its defaults; `trajforge train STAGE` builds one from the flags given (training/launch.py) and shows these
defaults in --help. No torch here, so the CLI starts fast."""

from dataclasses import asdict, dataclass, field, fields, replace

from trajforge.evaluation.factory import JudgeSpec

# GSPO's clip range (training/gspo.py): sequence-level ratios sit close to 1, far tighter than PPO's 0.2.
EPS_LOW = 3e-4
EPS_HIGH = 4e-4


@dataclass(frozen=True)
class LoopConfig:
    batch_size: int = 4  # sequences per micro-batch, per process
    grad_accum: int = 1
    lr: float | None = None  # None: default_lr(model), by the model's size
    warmup_steps: int = 10
    max_steps: int = 100
    weight_decay: float = 0.01
    clip: float = 1.0
    seed: int = 0
    bf16: bool | None = None  # None: on a CUDA GPU with bf16; --bf16 turns it on elsewhere (a CPU with AMX)
    eval_every: int = 50
    save_every: int = 50
    log_every: int = 1
    report_to: str = "none"  # where metrics.jsonl's lines also go: none or tensorboard (training/metrics_log.py)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class TinyModelConfig:
    """The default model: a small random-init Llama, sized for CPU."""

    hidden_size: int = 128
    intermediate_size: int = 384
    layers: int = 4
    heads: int = 4
    max_positions: int = 2048

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class StageConfig:
    """What CPT, SFT and agent SFT share: where the rows come from, how they become sequences, the model and the
    loop."""

    stage: str  # cpt, sft or agent-sft
    data: str  # CPT: a build-corpus folder; SFT: a curate-sft folder; agent SFT: raw trajectories (or a URL of one)
    output: str  # the run folder; a rerun resumes from its latest checkpoint
    init: str | None = None  # a checkpoint or Hugging Face model folder; None: the tiny random-init default
    tokenizer: str | None = None  # None: the init folder's, or one trained on the training data
    vocab_size: int = 4096
    context_length: int = 512
    mask_mode: str = "masked"  # "all": every observation in the loss, the comparison run without masking
    held_out: float = 0.1  # SFT: share of its trajectories kept for validation (CPT uses the corpus's held-out tasks)
    # What a trajectory teaches (training/agent_render.py): "world" predicts the observations, "agent" writes the
    # actions of successful trajectories, "both" trains the two documents of each.
    role: str = "world"
    model: TinyModelConfig = field(default_factory=TinyModelConfig)
    loop: LoopConfig = field(default_factory=LoopConfig)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CPTConfig(StageConfig):
    """CPT: masked next-observation prediction over whole trajectories of build-corpus shards."""

    stage: str = "cpt"
    data: str = "data/corpus"
    output: str = "runs/cpt"


@dataclass(frozen=True)
class SFTConfig(StageConfig):
    """SFT: the curated target (reasoning + predicted observation) of each curate-sft row."""

    stage: str = "sft"
    data: str = "data/sft"
    output: str = "runs/sft"


@dataclass(frozen=True)
class AgentSFTConfig(StageConfig):
    """Agent SFT: the actions of successful trajectories of training tasks (rejection sampling by outcome)."""

    stage: str = "agent-sft"
    data: str = "data/raw"
    output: str = "runs/agent-sft"
    role: str = "agent"


@dataclass(frozen=True)
class GSPOConfig:
    """What GSPO's rollout and update need (training/rl.py), the same for RL on prompts and agent RL over episodes:
    how a group is sampled, how the policy is updated from it, and when a step warns that it learned nothing. Each
    RL stage holds one, with its own defaults."""

    group_size: int = 4  # samples per prompt, or episodes per task (G)
    temperature: float = 1.0
    max_new_tokens: int = 128  # per sample (agent RL: per answer)
    updates_per_batch: int = 2
    groups_per_update: int = 1  # groups per optimizer step (0: a step's groups all in one)
    micro_batch: int = 4  # sequences per forward and backward (0: a group's all at once); the update is the same
    lr: float = 1e-5  # constant: no warmup, no decay
    clip: float = 1.0  # gradient norm, per minibatch update
    eps_low: float = EPS_LOW
    eps_high: float = EPS_HIGH
    kl_coef: float = 0.0  # weight of the KL to the starting model (0: no reference model is kept)
    degenerate_warning: float = 0.9  # warn when at least this share of a step's groups is degenerate

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RLConfig:
    """RL: GSPO on prepare-rl prompts, from a CPT or SFT checkpoint (`init`, required)."""

    data: str = "data/rl"
    output: str = "runs/rl"
    init: str | None = None
    prompts_per_step: int = 2
    gspo: GSPOConfig = GSPOConfig()
    max_steps: int = 100
    save_every: int = 50
    seed: int = 0
    judge: JudgeSpec = field(default_factory=JudgeSpec)
    report_to: str = "none"  # where metrics.jsonl's lines also go: none or tensorboard (training/metrics_log.py)

    def as_dict(self) -> dict:
        return asdict(self)


def take(config_type, given: dict) -> dict:
    """The entries of `given` named after fields of `config_type`, taken out of it."""
    return {f.name: given.pop(f.name) for f in fields(config_type) if f.name in given}


def with_gspo(base: GSPOConfig, given: dict) -> GSPOConfig:
    """`base` with the GSPO settings among `given` (taken out of it)."""
    return replace(base, **take(GSPOConfig, given))


def refuse_unknown(stage: str, given: dict) -> None:
    """A ValueError naming the flags left in `given`: none of the stage's settings, so never dropped in silence."""
    if given:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
        raise ValueError(f"train {stage} has no use for {flags}")
