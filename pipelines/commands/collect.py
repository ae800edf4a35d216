"""`trajforge collect`: run episodes in sandboxes, record raw trajectories."""

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from trajforge.collectors.collection import collect
from trajforge.collectors.config import AGENT_KEY_ENV, MODEL_POLICIES, CollectConfig
from trajforge.collectors.simulation import JUDGE_KEY_ENV, WORLD_MODEL_KEY_ENV, simulation
from trajforge.endpoints.model_ref import parse_model
from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, flags
from trajforge.pipelines.commands.unused_flags import episode_modes, is_endpoint, refuse_unused, when
from trajforge.pipelines.console import console, progress, warn

DEFAULTS = CollectConfig()

SimulateJudge = Annotated[
    str | None,
    typer.Option(
        help="With --world-model: URL=MODEL of an OpenAI-compatible judge that decides, for tasks without a check "
        "of their own, whether a simulated episode completed the task (given the task, its scripted solution and "
        "the episode)."
    ),
]
SimulateJudgeKeyEnv = Annotated[str, typer.Option(help=flags.key_env_help("the --simulate-judge endpoint's"))]
SimulationInstruction = Annotated[
    str | None,
    typer.Option(help="With --world-model: how the world model should behave (e.g. 'fail one call in five with a "
                 "503')."),
]  # fmt: skip
VerifyGenerated = Annotated[
    bool,
    typer.Option(
        help="Before collecting, run every generated task's scripted solution in its real environment; if one fails "
        "its own check, name it (and what the check said) and collect nothing."
    ),
]


def collect_command(
    context: typer.Context,
    suite: flags.Suites = list(DEFAULTS.suites),  # noqa: B006 - typer copies list defaults
    policy: flags.Policy = None,
    agent: flags.Agent = None,
    agent_key_env: flags.AgentKeyEnv = AGENT_KEY_ENV,
    temperature: flags.Temperature = DEFAULTS.temperature,
    output: flags.Output = DEFAULTS.output,
    run_id: flags.RunId = None,
    repeats: flags.Repeats = DEFAULTS.repeats,
    concurrency: flags.Concurrency = DEFAULTS.concurrency,
    shard: Annotated[str, typer.Option(help="Run only shard i of n (i/n), to split one run across machines.")] = "0/1",
    retries: flags.Retries = DEFAULTS.retries,
    max_turns: flags.MaxTurns = DEFAULTS.max_turns,
    command_timeout: flags.CommandTimeout = DEFAULTS.command_timeout,
    task: flags.Tasks = [],  # noqa: B006
    image: flags.Image = None,
    seed: flags.Seed = DEFAULTS.seed,
    explorer_steps: flags.ExplorerSteps = DEFAULTS.explorer_steps,
    flush_every: flags.FlushEvery = DEFAULTS.flush_every,
    faults: flags.Faults = None,
    world_model: flags.WorldModel = None,
    world_model_key_env: flags.WorldModelKeyEnv = WORLD_MODEL_KEY_ENV,
    simulate_prompt: flags.SimulatePrompt = None,
    simulate_max_tokens: flags.SimulateMaxTokens = None,
    simulate_judge: SimulateJudge = None,
    simulate_judge_key_env: SimulateJudgeKeyEnv = JUDGE_KEY_ENV,
    simulation_instruction: SimulationInstruction = None,
    control: flags.Control = None,
    verify_generated: VerifyGenerated = DEFAULTS.verify_generated,
) -> None:
    """Run task suites in sandboxes (Docker, MCP servers, Chromium) and record every episode as a raw trajectory.
    With --world-model, a world model stands in for every environment instead: each task's real starting state is
    recorded once (cached) and given to it, its check runs in the world model, and the trajectories are marked
    simulated.

    A stdio MCP server runs in a fresh, hardened container per episode (no network, no capabilities, non-root,
    read-only root) unless its suite says `isolation: host`. trajforge does NOT isolate an HTTP MCP server (`url:`):
    it acts wherever it runs; the manifest records its host.

    Output: OUTPUT/<run-id>/segment-*.jsonl and _manifest.json. Interrupted (even with kill -9)? Run the same
    command again: finished episodes are kept and skipped. Exit code 1 if some episodes ended with an
    infrastructure error after all retries, or a task error (its setup failed).

    --policy: scripted by default, or the policy an --agent model acts through. --run-id: the run's folder under
    OUTPUT, by default derived from the configuration (so rerunning the same command resumes).
    """
    options = dict(locals())
    del options["context"]
    acting = [policy or ("llm" if is_endpoint(agent) else "checkpoint" if agent else "scripted")]
    unused = {**episode_modes(acting, [agent] if agent else []), **simulation_modes(world_model, simulate_judge)}
    refuse_unused(context, unused)
    try:
        collected = collect(_config(options), log=console.print, warn=warn, progress=progress)
    except ValueError as exc:  # a bad suite, model or flag, no Docker daemon, an unreachable store: before any episode
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    raise typer.Exit(_print_summary(collected))


def simulation_modes(world_model: str | None, judge: str | None) -> dict[str, str]:
    """The key variables of endpoints the run does not talk to (the simulation's own flags are refused by
    collectors.simulation.simulation without a world model)."""
    return {
        **when(not is_endpoint(world_model), {"world_model_key_env": "only a --world-model endpoint has a key"}),
        **when(not judge, {"simulate_judge_key_env": "only a --simulate-judge endpoint has a key"}),
    }


def _config(o: dict) -> CollectConfig:
    """The config from the command's options (named as its fields, but the models and the simulation's)."""
    agent, key_env = o.pop("agent"), o.pop("agent_key_env")
    agent = parse_model(agent, "--agent", key_env) if agent else None
    policy = o.pop("policy")
    if agent is not None and policy not in (None, *MODEL_POLICIES):
        raise ValueError(f"--policy {policy} is model-free: it takes no --agent")
    settings = {name: o.pop(f"simulate_{name}") for name in ("prompt", "max_tokens")}
    world = simulation(o.pop("world_model"), o.pop("world_model_key_env"), o.pop("simulate_judge"),
                       o.pop("simulate_judge_key_env"), control=o.pop("control"),
                       instruction=o.pop("simulation_instruction"), **settings)  # fmt: skip
    suites, tasks = tuple(o.pop("suite")), tuple(o.pop("task"))
    return CollectConfig(suites=suites, tasks=tasks, policy=policy or DEFAULTS.policy, agent=agent,
                         simulation=world, **o)  # fmt: skip


def _print_summary(collected) -> int:
    """What a collectors.collection.Collected holds, and the exit code it deserves."""
    result, counts = collected.result, collected.counts
    console.print(
        f"[bold]collect[/]: {result.ran} episodes run, {result.skipped} already done, {result.retries} retries "
        f"in {result.seconds:.1f}s -> {collected.run_dir}"
    )
    outcomes = ", ".join(f"{k.split('.', 1)[1]} {v}" for k, v in counts.items() if k.startswith("outcome."))
    console.print(f"  holds {counts['written']} trajectories, {counts['turns']} turns ({outcomes})")
    table = Table("domain", "trajectories", "turns", box=None)
    for key, value in counts.items():
        if key.startswith("domain."):
            domain = key.split(".", 1)[1]
            table.add_row(domain, str(value), str(counts.get(f"turns.{domain}", 0)))
    console.print(table)
    if result.ran and result.infra_errors == result.ran:
        console.print(
            f"[red]every episode run ({result.ran}) ended as infra_error[/]: the environment (or the world model) "
            "never let one finish; each trajectory's outcome.error says why",
            soft_wrap=True,
        )
    return EXIT_REJECTED if result.infra_errors or result.task_errors else EXIT_OK
