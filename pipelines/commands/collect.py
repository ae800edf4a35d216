"""`trajforge collect`: run episodes in sandboxes, record raw trajectories."""

from enum import Enum

import typer
from rich.table import Table
from rich.text import Text

from trajforge.collectors.collection import collect
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.policies import POLICIES
from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE
from trajforge.pipelines.commands.options import add_options, key_env_help
from trajforge.pipelines.console import console, progress, warn
from trajforge.sandboxes.control import CONTROL_PRESETS
from trajforge.schemas.check_turn import FILE_CHECKS

DEFAULTS = CollectConfig()
PolicyChoice = Enum("PolicyChoice", {name: name for name in POLICIES}, type=str)

SUITES = typer.Option(list(DEFAULTS.suites), "--suite", "-s", help="Bundled suite name or a .yaml path; repeatable.")
POLICY = typer.Option(
    PolicyChoice(DEFAULTS.policy),
    help=f"{POLICIES.describe('; ')}.",
)
OUTPUT = typer.Option(
    DEFAULTS.output,
    "--output",
    "-o",
    help="Runs go to OUTPUT/<run-id>/: a folder or a URL (s3://bucket/raw; S3 settings from the AWS "
    "environment, e.g. AWS_ENDPOINT_URL_S3).",
)
RUN_ID = typer.Option(None, help="Default: derived from the configuration, so rerunning the same command resumes.")
REPEATS = typer.Option(DEFAULTS.repeats, min=1, help="Episodes per task.")
CONCURRENCY = typer.Option(DEFAULTS.concurrency, min=1, help="Episodes in parallel.")
SHARD = typer.Option(DEFAULTS.shard, help="Run only shard i of n (i/n), to split one run across machines.")
RETRIES = typer.Option(
    DEFAULTS.retries,
    min=0,
    help="Retries of an episode after an infrastructure failure (never after an agent failure or a failed task setup).",
)
MAX_TURNS = typer.Option(DEFAULTS.max_turns, min=1, help="Turns before an episode ends as a timeout.")
COMMAND_TIMEOUT = typer.Option(DEFAULTS.command_timeout, min=0.1, help="Seconds before a command is interrupted.")
TASKS = typer.Option([], "--task", help="Only these task ids (repeatable); SUITE/ID: that suite's task alone.")
IMAGE = typer.Option(None, help="Sandbox image (default: the base image, built if missing).")
SEED = typer.Option(DEFAULTS.seed, help="Seed of the explorer and the LLM sampling.")
EXPLORER_STEPS = typer.Option(DEFAULTS.explorer_steps, min=1, help="Commands per explorer episode.")
LLM_URL = typer.Option(
    None, envvar="TRAJFORGE_LLM_URL", help="Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1"
)
LLM_MODEL = typer.Option(None, envvar="TRAJFORGE_LLM_MODEL", help="Model name for the llm policy.")
LLM_KEY_ENV = typer.Option(DEFAULTS.llm_key_env, "--llm-key-env", help=key_env_help("the llm policy's endpoint's"))
CHECKPOINT = typer.Option(
    None,
    help="The checkpoint policy's model: a trajforge checkpoint, a local Hugging Face model folder, or `smollm2`.",
)
TEMPERATURE = typer.Option(
    DEFAULTS.temperature, min=0.0, help="Sampling temperature of the llm and checkpoint policies; 0 is greedy."
)
FLUSH_EVERY = typer.Option(
    DEFAULTS.flush_every, min=1, help="Episodes per raw segment (a kill loses at most this many)."
)
FAULTS = typer.Option(None, help="Inject faults into every environment: a bundled config (unreliable) or a YAML path.")
SIMULATE = typer.Option(
    None,
    help="Run every episode against a world model instead of the real environment: URL=MODEL (an "
    "OpenAI-compatible endpoint, e.g. `trajforge serve`, vLLM) or CHECKPOINT (a trajforge or Hugging Face "
    "folder, or smollm2, run here; concurrent episodes share batches). Each task's real starting state is "
    "recorded once (cached) and given to the world model; its check runs in the world model. Trajectories are "
    "marked simulated.",
)
SIMULATE_KEY_ENV = typer.Option(
    DEFAULTS.simulate_key_env, "--simulate-key-env", help=key_env_help("the --simulate world model's")
)
SIMULATION_INSTRUCTION = typer.Option(
    DEFAULTS.simulation_instruction,
    help="With --simulate: how the world model should behave (e.g. 'fail one call in five with a 503').",
)
CONTROL = typer.Option(
    None,
    help=f"With --simulate: per-episode control of the world model, a preset ({', '.join(CONTROL_PRESETS)}) or a YAML "
    "distribution; each episode samples which faults to show where, says so in its simulation_instruction and "
    "records it in its metadata (`control`).",
)
SimulatePrompt = Enum("SimulatePrompt", {name: name for name in ("auto", "plain", "template")}, type=str)
SIMULATE_PROMPT = typer.Option(
    SimulatePrompt(DEFAULTS.simulate_prompt),
    help="With --simulate: how the world model was trained to be asked. plain: the system prompt as CPT renders it "
    "(a CPT checkpoint); template: a world-model template asking for <predicted_observation> (SFT, RL); auto: plain "
    "for a CPT checkpoint, template otherwise (an endpoint does not say what it serves).",
)
SimulateFileCheck = Enum("SimulateFileCheck", {name: name for name in FILE_CHECKS}, type=str)
SIMULATE_FILE_CHECK = typer.Option(
    SimulateFileCheck(DEFAULTS.simulate_file_check),
    help='With --simulate: how a task check comparing one file with a value (test "$(cat F)" = V) is decided. '
    "content: by the file the world model predicts for cat F after the episode; exit-code: by the check's predicted "
    "exit code, as other shell checks. Which agrees better with the real environment depends on the world model: "
    "sim-check reports both.",
)
SIMULATE_MAX_TOKENS = typer.Option(
    DEFAULTS.simulate_max_tokens,
    min=1,
    help="With --simulate: the most tokens the world model writes for one observation (a longer answer is cut "
    "there). Lower it when the agent's context window is small: an observation that fills it ends the episode.",
)
SIMULATE_JUDGE = typer.Option(
    None,
    help="With --simulate: URL=MODEL of an OpenAI-compatible judge that decides, for tasks without a check of their "
    "own, whether a simulated episode completed the task (given the task, its scripted solution and the episode).",
)
SIMULATE_JUDGE_KEY_ENV = typer.Option(
    DEFAULTS.simulate_judge_key_env, "--simulate-judge-key-env", help=key_env_help("the --simulate-judge endpoint's")
)
VERIFY_GENERATED = typer.Option(
    DEFAULTS.verify_generated,
    help="Before collecting, run every generated task's scripted solution in its real environment; if one fails "
    "its own check, name it (and what the check said) and collect nothing.",
)

OPTIONS = {  # {parameter: (type, option)}, in the order of --help; `_config` makes them a CollectConfig
    "suite": (list[str], SUITES),
    "policy": (PolicyChoice, POLICY),
    "output": (str, OUTPUT),
    "run_id": (str | None, RUN_ID),
    "repeats": (int, REPEATS),
    "concurrency": (int, CONCURRENCY),
    "shard": (str, SHARD),
    "retries": (int, RETRIES),
    "max_turns": (int, MAX_TURNS),
    "command_timeout": (float, COMMAND_TIMEOUT),
    "task": (list[str], TASKS),
    "image": (str | None, IMAGE),
    "seed": (int, SEED),
    "explorer_steps": (int, EXPLORER_STEPS),
    "llm_url": (str | None, LLM_URL),
    "llm_model": (str | None, LLM_MODEL),
    "llm_key_env": (str, LLM_KEY_ENV),
    "checkpoint": (str | None, CHECKPOINT),
    "temperature": (float, TEMPERATURE),
    "flush_every": (int, FLUSH_EVERY),
    "faults": (str | None, FAULTS),
    "simulate": (str | None, SIMULATE),
    "simulate_key_env": (str, SIMULATE_KEY_ENV),
    "simulation_instruction": (str, SIMULATION_INSTRUCTION),
    "control": (str | None, CONTROL),
    "simulate_prompt": (SimulatePrompt, SIMULATE_PROMPT),
    "simulate_file_check": (SimulateFileCheck, SIMULATE_FILE_CHECK),
    "simulate_max_tokens": (int, SIMULATE_MAX_TOKENS),
    "simulate_judge": (str | None, SIMULATE_JUDGE),
    "simulate_judge_key_env": (str, SIMULATE_JUDGE_KEY_ENV),
    "verify_generated": (bool, VERIFY_GENERATED),
}


def _config(options: dict) -> CollectConfig:
    """The config from the command's options, which carry its field names (but `suite`, `task`, `policy`), enums
    as their values."""
    suites, tasks, policy = tuple(options.pop("suite")), tuple(options.pop("task")), options.pop("policy").value
    options["simulate_prompt"] = options["simulate_prompt"].value
    options["simulate_file_check"] = options["simulate_file_check"].value
    return CollectConfig(suites=suites, tasks=tasks, policy=policy, **options)


def collect_command(config: CollectConfig) -> None:
    """Run task suites in sandboxes (Docker, MCP servers, Chromium) and record every episode as a raw trajectory.

    A stdio MCP server runs in a fresh, hardened container per episode (no network, no capabilities, non-root,
    read-only root) unless its suite says `isolation: host`. trajforge does NOT isolate an HTTP MCP server (`url:`):
    it acts wherever it runs; the manifest records its host.

    Output: OUTPUT/<run-id>/segment-*.jsonl and _manifest.json. Interrupted (even with kill -9)? Run the same
    command again: finished episodes are kept and skipped. Exit code 1 if some episodes ended with an
    infrastructure error after all retries, or a task error (its setup failed).
    """
    try:
        collected = collect(config, log=console.print, warn=warn, progress=progress)
    except ValueError as exc:  # a bad suite or flag, no Docker daemon, an unreachable store: before any episode
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    raise typer.Exit(_print_summary(collected))


collect_command = add_options(collect_command, OPTIONS, "config", _config)


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
