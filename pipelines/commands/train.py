"""`trajforge train STAGE`: the bundled trainer, one command per stage (world models: cpt, sft, rl; agents:
agent-sft, agent-rl), each with only its own flags (train_options.py); its progress and its one-line result."""

import contextlib

import typer

from trajforge.pipelines.commands import EXIT_OK, EXIT_USAGE, judge_options
from trajforge.pipelines.commands.options import add_options
from trajforge.pipelines.commands.train_options import stage_options
from trajforge.pipelines.console import console, warn

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


def stage_command(stage: str):
    """The command of one stage: its own options, handed to `train` as one `flags` dict."""

    def command(flags: dict) -> None:
        train(stage, flags)

    command.__doc__ = STAGES[stage][1]
    return add_options(command, stage_options(stage), "flags", dict)


def train(stage: str, flags: dict) -> None:
    """Build the stage's config from its flags, run it with its progress, print its one-line result."""
    from trajforge.endpoints import EndpointError
    from trajforge.training.distributed import close_world, init_world

    eval_only = flags.pop("eval_only", False)
    world = init_world()
    try:
        config = _config(stage, flags)
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


def _config(stage: str, flags: dict):
    from trajforge.agents.config import AGENT_RL, agent_rl_config
    from trajforge.training.launch import stage_config
    from trajforge.training.metrics_log import check_reporter

    check_reporter(flags.get("report_to") or "none")  # before any data or model is loaded
    if stage == AGENT_RL:
        return agent_rl_config(**flags)
    if stage == "rl":
        judge = judge_options.judge_spec(**{name: flags.pop(name) for name in judge_options.OPTIONS})
        return stage_config(stage, **flags, judge=judge)
    return stage_config(stage, **flags)


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


for _stage, (_line, _) in STAGES.items():
    train_app.command(_stage, short_help=_line)(stage_command(_stage))
