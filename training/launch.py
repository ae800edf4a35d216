"""`trajforge train` as one library call: the typed config of each stage (training/configs.py), built from the flags
a user gave, and its run. A flag left out takes the stage config's own default; a value given is never replaced."""

from dataclasses import fields, replace

from trajforge.training.configs import (
    AgentSFTConfig,
    CPTConfig,
    LoopConfig,
    RLConfig,
    SFTConfig,
    StageConfig,
    TinyModelConfig,
)
from trajforge.training.distributed import World

CONFIGS: dict[str, type[StageConfig] | type[RLConfig]] = {
    "cpt": CPTConfig,
    "sft": SFTConfig,
    "rl": RLConfig,
    "agent-sft": AgentSFTConfig,
}


def _known(config_type, given: dict) -> dict:
    names = {f.name for f in fields(config_type)}
    return {name: value for name, value in given.items() if name in names}


def stage_config(stage: str, **flags) -> StageConfig | RLConfig:
    """The stage's config from command-line flags (None: not given, so the config's default holds). Flags the stage
    has no use for (an RL option for CPT, a model size for RL) are left out."""
    if stage not in CONFIGS:
        raise ValueError(f"--stage {stage!r}: choose {', '.join(CONFIGS)}")
    given = {name: value for name, value in flags.items() if value is not None}
    if stage == "rl":
        return RLConfig(**_known(RLConfig, given))
    base = CONFIGS[stage]()
    loop = replace(base.loop, **_known(LoopConfig, given))
    if not loop.eval_every:  # 0: the held-out loss at the end only
        loop = replace(loop, eval_every=loop.max_steps)
    model = replace(base.model, **_known(TinyModelConfig, given))
    model = replace(model, intermediate_size=3 * model.hidden_size)
    mask_mode = "all" if given.get("no_mask") else base.mask_mode
    return replace(base, **_known(StageConfig, given), loop=loop, model=model, mask_mode=mask_mode)


def run_training(config: StageConfig | RLConfig, world: World, progress=None, eval_only: bool = False) -> dict:
    """Run the stage the config is for: CPT, SFT and agent SFT in `world` (torchrun's processes), RL in this one
    process. The last step's metrics."""
    if isinstance(config, RLConfig):
        from trajforge.training.rl import run_rl

        return run_rl(config, progress)
    from trajforge.training.stages import run_stage

    return run_stage(config, world, progress, eval_only)
