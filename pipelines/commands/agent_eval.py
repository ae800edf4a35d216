"""`trajforge agent-eval`: agents' success on held-out tasks in the real environment, with 95% intervals, each row
compared with the reference (the first --agent) by a paired difference; its header says how the episodes were
sampled. The run itself is `agents.agent_eval.evaluate_agents`; the flags of each agent's collect run are
collect's."""

import json
from pathlib import Path

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from trajforge.agents.agent_eval import (
    HELD_OUT_FAMILY,
    AgentEvalConfig,
    AgentEvalResult,
    Score,
    evaluate_agents,
    model_agent,
    pass_ks,
    policy_agent,
)
from trajforge.collectors.config import AGENT_KEY_ENV, CollectConfig
from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, flags
from trajforge.pipelines.commands.unused_flags import episode_modes, refuse_unused
from trajforge.pipelines.console import console, out, progress, warn
from trajforge.schemas.splits import SplitConfig

DEFAULTS = AgentEvalConfig()
RUN = DEFAULTS.run


def agent_eval_command(
    context: typer.Context,
    agent: flags.Agents = [],  # noqa: B006 - typer copies list defaults
    agent_key_env: flags.AgentKeyEnv = AGENT_KEY_ENV,
    policy: flags.Policies = [],  # noqa: B006
    suite: flags.Suites = list(RUN.suites),  # noqa: B006
    held_out: flags.HeldOut = DEFAULTS.split.held_out,
    split_seed: flags.SplitSeed = DEFAULTS.split.seed,
    held_out_family: flags.HeldOutFamily = [],  # noqa: B006
    part: flags.Part = DEFAULTS.part,
    limit: flags.Limit = None,
    report: flags.Report = Path("agent-eval.json"),
    output: flags.Output = RUN.output,
    repeats: flags.Repeats = RUN.repeats,
    concurrency: flags.Concurrency = RUN.concurrency,
    retries: flags.Retries = RUN.retries,
    max_turns: flags.MaxTurns = RUN.max_turns,
    command_timeout: flags.CommandTimeout = RUN.command_timeout,
    image: flags.Image = None,
    seed: flags.Seed = RUN.seed,
    explorer_steps: flags.ExplorerSteps = RUN.explorer_steps,
    flush_every: flags.FlushEvery = RUN.flush_every,
    faults: flags.Faults = None,
    temperature: flags.Temperature = RUN.temperature,
) -> None:
    """Run each agent (repeat --agent and --policy to compare several: one row each, the same tasks) on the
    HELD-OUT tasks of the suites, the tasks build-corpus holds out with the same --held-out, --split-seed and
    --held-out-family (--part: the test part, or the validation part that choices read), in the real environment
    (Docker, MCP servers, Chromium), and report per agent, suite and task family, and with --held-out-family the
    in-family test tasks and the held-out family's apart (each with its N): the success rate with its 95%
    interval, mean turns, the share of answers that could not be read as an action, and apart the infrastructure
    errors, task errors and tasks without a check (never the agent's failures). Every row is compared with the
    reference, the first --agent (else the first --policy), by the paired difference of their success on the same
    tasks, with its 95% interval.

    Every episode is kept as a raw trajectory, OUTPUT/<run-id>/ per agent as `collect` writes it, so agent runs feed
    the corpus too, and rerunning the same command resumes. Exit code 1 if some episodes ended with an
    infrastructure or a task error.

    Models act greedily (--temperature 0) unless told otherwise; --repeats N (N > 1, with --temperature above 0)
    gives N samples per task: the mean success, its interval over tasks, and pass@k. The table's header states the
    temperature, the samples per task and the seed; so does the report.

    --policy: a model-free policy (scripted, explorer). --limit N: only the first N held-out tasks of each suite, in
    the suite's order: a quicker, smaller sample (its intervals are wider); the same N gives the same tasks.
    A greedy model run with --concurrency above 1 also runs its first 8 tasks one at a time (batch 1): the output
    says how many of those episodes took the same actions alone as in their batch, and the successes of each."""
    o = dict(locals())
    refuse_unused(o.pop("context"), episode_modes(policy, agent))
    try:
        key_env = o.pop("agent_key_env")
        agents = (*map(policy_agent, o.pop("policy")), *(model_agent(a, key_env) for a in o.pop("agent")))
        split = SplitConfig(o.pop("held_out"), DEFAULTS.split.sft_rl_share, o.pop("split_seed"),
                            tuple(o.pop("held_out_family")))  # fmt: skip
        report, limit, suites, part = o.pop("report"), o.pop("limit"), tuple(o.pop("suite")), o.pop("part")
        config = AgentEvalConfig(agents, CollectConfig(suites=suites, **o), split, limit, part)
        result = evaluate_agents(config, log=console.print, warn=warn, progress=progress)
    except ValueError as exc:  # no agent, no held-out task, a bad suite or flag, no Docker daemon: before any episode
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    show(result)
    report.write_text(json.dumps(result.as_dict(), indent=2))
    raise typer.Exit(EXIT_REJECTED if result.errors else EXIT_OK)


def show(result: AgentEvalResult) -> None:
    """One table: each agent over every task of the part, then per suite, (when they differ) per family, and with a
    held-out family its in-family and held-out-family rows; then each row's paired difference from the reference."""
    tasks = sum(len(ids) for ids in result.held_out.values())
    title = (
        f"agents on {tasks} {result.part} tasks of {', '.join(result.held_out)}; {result.sampling.describe()}; "
        f"95% intervals ({'Wilson' if result.sampling.samples_per_task == 1 else 'bootstrap over tasks'})"
    )
    table = Table(title=title, box=box.SIMPLE_HEAD)
    ks = pass_ks(result.sampling.samples_per_task) if result.sampling.samples_per_task > 1 else []
    for column in ("agent", "tasks", "success %", "95% interval", *(f"pass@{k} %" for k in ks), "scored", "turns",
                   "unparseable %", "not scored"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("agent", "tasks", "not scored") else "right")
    for report in result.reports:
        table.add_row(report.agent.label, "all", *_figures(report.overall, ks))
        groups = [(f"suite {k}", v) for k, v in report.per_suite.items()] if len(report.per_suite) > 1 else []
        if set(report.per_family) != set(report.per_suite):
            groups += [(f"family {k}", v) for k, v in report.per_family.items()]
        if any(HELD_OUT_FAMILY in part for part in report.per_part):  # out of distribution beside in distribution
            groups += list(report.per_part.items())
        for i, (name, score) in enumerate(groups):
            table.add_row("(model-free)" if report.model_free and i == 0 else "", name, *_figures(score, ks))
        if report.model_free and not groups:
            table.add_row("(model-free)")
        table.add_section()
    out.print(table)
    show_paired(result)
    for report in result.reports:
        done = f", {report.skipped} done before" if report.skipped else ""
        console.print(Text(f"  {report.agent.label}: {report.ran} episodes run{done} -> {report.run_dir}"))
        if (check := report.batch_check) is not None:
            out.print(Text(f"  {report.agent.label}: batch check, {check['episodes']} episodes run again one at a "
                           f"time: {check['same_actions']} took the same actions; successes "
                           f"{check['successes_batched']} batched, {check['successes_alone']} alone"))  # fmt: skip


def show_paired(result: AgentEvalResult) -> None:
    """Each row's success minus the reference's on the tasks both scored, with its interval."""
    if not result.paired:
        return
    reference = result.reference
    name = f"{reference.agent.label}{' (model-free)' if reference.model_free else ''}"
    out.print(Text(f"success against the reference row {name}, paired by task (95% interval):"))
    for report, difference in result.paired:
        label = f"{report.agent.label}{' (model-free)' if report.model_free else ''}"
        line = (
            f"{difference.describe(of=result.sampling.units)}; {difference.method}"
            if difference
            else "no task scored by both"
        )
        out.print(Text(f"  {label}: {line}"))


def _figures(score: Score, ks: list[int]) -> list[str]:
    def percent(value: float | None) -> str:
        return f"{100 * value:.1f}" if value is not None else "-"

    low, high = score.interval or (None, None)
    apart = {"infra": score.infra_errors, "task error": score.task_errors, "no check": score.unchecked}
    return [
        percent(score.rate(score.successes)),
        f"{percent(low)}-{percent(high)}" if score.scored else "-",
        *(percent(score.pass_at(k)) for k in ks),
        str(score.scored),
        f"{score.rate(score.turns):.1f}" if score.scored else "-",
        percent(score.rate(score.unparseable)),
        ", ".join(f"{n} {what}" for what, n in apart.items() if n) or "0",
    ]
