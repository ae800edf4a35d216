"""`trajforge train` as one library call: the typed config of each stage (training/configs.py), built from the flags
a user gave, and its run. A flag left out takes the stage config's own default; a value given is never replaced; a
flag the stage has no use for is an error."""

from dataclasses import replace

from trajforge.endpoints.model_ref import parse_model
from trajforge.training.configs import (
    AgentSFTConfig,
    CPTConfig,
    LoopConfig,
    RLConfig,
    SFTConfig,
    StageConfig,
    TinyModelConfig,
    refuse_unknown,
    take,
    with_gspo,
)
from trajforge.training.distributed import World

CONFIGS: dict[str, type[StageConfig] | type[RLConfig]] = {
    "cpt": CPTConfig,
    "sft": SFTConfig,
    "rl": RLConfig,
    "agent-sft": AgentSFTConfig,
}


def stage_config(stage: str, **flags) -> StageConfig | RLConfig:
    """The stage's config from command-line flags (None: not given, so the config's default holds). A flag that is
    none of the stage's settings (a model size for RL) is a ValueError naming it: the command line only passes the
    flags a stage takes, so nothing is dropped in silence."""
    if stage not in CONFIGS:
        raise ValueError(f"train {stage!r}: choose {', '.join(CONFIGS)}")
    given = {name: value for name, value in flags.items() if value is not None}
    if "init" in given:  # a trajforge checkpoint, a Hugging Face model folder or smollm2: weights to train
        parse_model(given["init"], "--init", weights_only=True)
        sized = [f"--{name.replace('_', '-')}" for name in ("hidden_size", "layers") if name in given]
        if sized:
            raise ValueError(f"{', '.join(sized)}: sizes the tiny default model; --init {given['init']} brings its own")
    if stage == "rl":
        gspo = with_gspo(RLConfig.gspo, given)
        known = take(RLConfig, given)
        refuse_unknown(stage, given)
        return RLConfig(**known, gspo=gspo)
    base = CONFIGS[stage]()
    mask_mode = "all" if given.pop("no_mask", False) else base.mask_mode
    loop = replace(base.loop, **take(LoopConfig, given))
    if not loop.eval_every:  # 0: the held-out loss at the end only
        loop = replace(loop, eval_every=loop.max_steps)
    model = replace(base.model, **take(TinyModelConfig, given))
    model = replace(model, intermediate_size=3 * model.hidden_size)
    known = take(StageConfig, given)
    refuse_unknown(stage, given)
    return replace(base, **known, loop=loop, model=model, mask_mode=mask_mode)


def run_training(config: StageConfig | RLConfig, world: World, progress=None, eval_only: bool = False) -> dict:
    """Run the stage the config is for: CPT, SFT and agent SFT in `world` (torchrun's processes), RL in this one
    process. The last step's metrics."""
    if isinstance(config, RLConfig):
        from trajforge.training.rl import run_rl

        return run_rl(config, progress)
    from trajforge.training.stages import run_stage

    return run_stage(config, world, progress, eval_only)
