"""`trajforge agent-eval`: agents' success on held-out tasks in the real environment, with 95% Wilson intervals.
The run itself is `agents.agent_eval.evaluate_agents`; the flags of each agent's collect run are collect's."""

import json
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from trajforge.agents.agent_eval import (
    AgentEvalConfig,
    AgentEvalResult,
    Score,
    checkpoint_agent,
    endpoint_agent,
    evaluate_agents,
    policy_agent,
)
from trajforge.collectors.config import CollectConfig
from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE
from trajforge.pipelines.commands import collect as collect_options
from trajforge.pipelines.commands.build_corpus import HeldOut, HeldOutFamily, SplitSeed
from trajforge.pipelines.commands.options import add_options, key_env_help
from trajforge.pipelines.console import console, out, progress, warn
from trajforge.schemas.splits import SplitConfig

DEFAULTS = AgentEvalConfig()
RUN_OPTIONS = ("output", "repeats", "concurrency", "retries", "max_turns", "command_timeout", "image", "seed",
               "explorer_steps", "flush_every", "faults", "temperature")  # fmt: skip

Checkpoints = Annotated[
    list[Path], typer.Option("--checkpoint", "-c", help="A checkpoint folder, acting through the checkpoint policy.")
]
Endpoints = Annotated[
    list[str], typer.Option(help="URL=MODEL of an OpenAI-compatible endpoint, acting through the llm policy.")
]
Policies = Annotated[list[str], typer.Option("--policy", help="A model-free policy: scripted or explorer.")]
Report = Annotated[Path, typer.Option("--json", help="Write the figures of every agent as JSON here.")]
Limit = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Only the first N held-out tasks of each suite, in the suite's order: a quicker, smaller sample (its "
        "intervals are wider); the same N gives the same tasks. Default: all of them.",
    ),
]


def agent_eval_command(
    checkpoint: Checkpoints = [],  # noqa: B006 - typer copies list defaults
    endpoint: Endpoints = [],  # noqa: B006
    policy: Policies = [],  # noqa: B006
    held_out: HeldOut = DEFAULTS.split.held_out,
    split_seed: SplitSeed = DEFAULTS.split.seed,
    held_out_family: HeldOutFamily = [],  # noqa: B006
    report: Report = Path("agent-eval.json"),
    limit: Limit = None,
    run: CollectConfig = DEFAULTS.run,
) -> None:
    """Run each agent (repeat the flags to compare several: one row each, the same tasks) on the HELD-OUT tasks
    of the suites, the tasks build-corpus holds out with the same --held-out, --split-seed and --held-out-family,
    in the real environment (Docker, MCP servers, Chromium), and report per agent, suite and task family: the
    success rate with its 95% Wilson interval, mean turns, the share of answers that could not be read as an
    action, and apart the infrastructure errors, task errors and tasks without a check (never the agent's
    failures).

    Every episode is kept as a raw trajectory, OUTPUT/<run-id>/ per agent as `collect` writes it, so agent runs feed
    the corpus too, and rerunning the same command resumes. Exit code 1 if some episodes ended with an
    infrastructure or a task error."""
    try:
        agents = (*map(policy_agent, policy), *map(checkpoint_agent, checkpoint), *map(endpoint_agent, endpoint))
        split = SplitConfig(held_out, DEFAULTS.split.sft_rl_share, split_seed, tuple(held_out_family))
        config = AgentEvalConfig(agents, run, split, limit)
        result = evaluate_agents(config, log=console.print, warn=warn, progress=progress)
    except ValueError as exc:  # no agent, no held-out task, a bad suite or flag, no Docker daemon: before any episode
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    show(result)
    report.write_text(json.dumps(result.as_dict(), indent=2))
    raise typer.Exit(EXIT_REJECTED if result.errors else EXIT_OK)


RUN = {  # the collect run each agent gets: {parameter: (type, option)}, in the order of --help
    "suite": (list[str], typer.Option(list(DEFAULTS.run.suites), "--suite", "-s", help=collect_options.SUITES.help)),
    "endpoint_key_env": (str, typer.Option(DEFAULTS.run.llm_key_env, help=key_env_help("the --endpoint models'"))),
    **{name: collect_options.OPTIONS[name] for name in RUN_OPTIONS},
}


def _run_config(options: dict) -> CollectConfig:
    suites, key_env = tuple(options.pop("suite")), options.pop("endpoint_key_env")
    return CollectConfig(suites=suites, llm_key_env=key_env, **options)


agent_eval_command = add_options(agent_eval_command, RUN, "run", _run_config)


def show(result: AgentEvalResult) -> None:
    """One table: each agent over every held-out task, then per suite and (when they differ) per family."""
    tasks = sum(len(ids) for ids in result.held_out.values())
    title = f"agents on {tasks} held-out tasks of {', '.join(result.held_out)}, with 95% Wilson intervals"
    table = Table(title=title, box=box.SIMPLE_HEAD)
    for column in ("agent", "tasks", "success %", "95% interval", "scored", "turns", "unparseable %", "not scored"):
        table.add_column(column, justify="left" if column in ("agent", "tasks", "not scored") else "right")
    for report in result.reports:
        table.add_row(report.agent.label, "all", *_figures(report.overall))
        groups = [(f"suite {k}", v) for k, v in report.per_suite.items()] if len(report.per_suite) > 1 else []
        if set(report.per_family) != set(report.per_suite):
            groups += [(f"family {k}", v) for k, v in report.per_family.items()]
        for i, (name, score) in enumerate(groups):
            table.add_row("(model-free)" if report.model_free and i == 0 else "", name, *_figures(score))
        if report.model_free and not groups:
            table.add_row("(model-free)")
        table.add_section()
    out.print(table)
    for report in result.reports:
        done = f", {report.skipped} done before" if report.skipped else ""
        console.print(Text(f"  {report.agent.label}: {report.ran} episodes run{done} -> {report.run_dir}"))


def _figures(score: Score) -> list[str]:
    def percent(value: float | None) -> str:
        return f"{100 * value:.1f}" if value is not None else "-"

    low, high = score.interval or (None, None)
    apart = {"infra": score.infra_errors, "task error": score.task_errors, "no check": score.unchecked}
    return [
        percent(score.rate(score.successes)),
        f"{percent(low)}-{percent(high)}" if score.scored else "-",
        str(score.scored),
        f"{score.rate(score.turns):.1f}" if score.scored else "-",
        percent(score.rate(score.unparseable)),
        ", ".join(f"{n} {what}" for what, n in apart.items() if n) or "0",
    ]
