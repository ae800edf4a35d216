"""`trajforge sim-check`: a world model's fidelity against the real environment, per domain and task family on
held-out tasks: single step, success agreement, WM2Real and controllability (`agents.sim_check`)."""

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from trajforge.agents.agent_eval import model_agent, policy_agent
from trajforge.agents.sim_check import SimCheckConfig, below_thresholds, check_simulator, world_model_of
from trajforge.collectors.config import AGENT_KEY_ENV, CollectConfig
from trajforge.collectors.simulation import WORLD_MODEL_KEY_ENV, simulation
from trajforge.evaluation.models import how_sampled, samples_per
from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, flags
from trajforge.pipelines.commands.eval import write_predictions
from trajforge.pipelines.commands.judge_options import JUDGE_DEFAULTS, KEY_ENV, judge_of
from trajforge.pipelines.commands.unused_flags import episode_modes, is_endpoint, refuse_unused, when
from trajforge.pipelines.console import console, out, progress, warn
from trajforge.sandboxes.controllability import describe_produced
from trajforge.schemas.splits import SplitConfig

DEFAULTS = SimCheckConfig()
RUN = DEFAULTS.run

Episodes = Annotated[bool, typer.Option(help="Run the episode figures (--no-episodes: single step only, no sandbox).")]


def sim_check_command(
    context: typer.Context,
    world_model: flags.WorldModel = None,
    world_model_key_env: flags.WorldModelKeyEnv = WORLD_MODEL_KEY_ENV,
    corpus: flags.Corpus = DEFAULTS.corpus,
    limit: flags.Limit = DEFAULTS.limit,
    plain: flags.Plain = DEFAULTS.plain,
    max_new_tokens: flags.MaxNewTokens = DEFAULTS.sampling.max_tokens,
    agent: flags.Agent = None,
    agent_key_env: flags.AgentKeyEnv = AGENT_KEY_ENV,
    policy: flags.Policy = DEFAULTS.agent.policy,
    control: flags.Control = "errors",
    episodes: Episodes = DEFAULTS.episodes,
    held_out: flags.HeldOut = DEFAULTS.split.held_out,
    split_seed: flags.SplitSeed = DEFAULTS.split.seed,
    held_out_family: flags.HeldOutFamily = [],  # noqa: B006 - typer copies list defaults
    part: flags.Part = DEFAULTS.part,
    judge: flags.Judge = JUDGE_DEFAULTS.kind,
    judge_url: flags.JudgeUrl = None,
    judge_model: flags.JudgeModel = None,
    judge_key_env: flags.JudgeKeyEnv = KEY_ENV,
    rubrics: flags.Rubrics = None,
    judge_timeout: flags.JudgeTimeout = JUDGE_DEFAULTS.timeout,
    report: flags.Report = Path("sim-check.json"),
    predictions: flags.Predictions = None,
    simulate_max_tokens: flags.SimulateMaxTokens = None,
    suite: flags.Suites = list(RUN.suites),  # noqa: B006
    task: flags.Tasks = [],  # noqa: B006
    output: flags.Output = RUN.output,
    run_id: flags.RunId = None,
    repeats: flags.Repeats = RUN.repeats,
    concurrency: flags.Concurrency = RUN.concurrency,
    retries: flags.Retries = RUN.retries,
    max_turns: flags.MaxTurns = RUN.max_turns,
    command_timeout: flags.CommandTimeout = RUN.command_timeout,
    image: flags.Image = None,
    seed: flags.Seed = RUN.seed,
    explorer_steps: flags.ExplorerSteps = RUN.explorer_steps,
    temperature: flags.Temperature = RUN.temperature,
) -> None:
    """Measure a world model (--world-model: a checkpoint folder, smollm2 or URL=MODEL) against the real environment
    on HELD-OUT tasks (build-corpus's split: the same --held-out, --split-seed, --held-out-family; --part: the test
    part, or the validation part that choices read), per domain and family (a held-out family's groups say so):
    single step on held-out corpus turns (exact match, error-flag agreement, judge scores; beside the
    model-free baselines copy previous and retrieval), success agreement (the agent's episodes simulated and real),
    WM2Real (simulated actions replayed for real: per-turn agreement, real share of simulated successes),
    controllability (under --control: instructed faults produced, other turns clean). The episode runs go to
    OUTPUT/<prefix>-real, -sim, -replay, -controlled (a rerun resumes). Exit 1: an episode's infra or task error.

    --corpus: its held-out turns (single step) and its training split (the retrieval baseline); --limit: held-out
    trajectories at most (single step); --plain and --max-new-tokens: the single-step prompts and answers;
    --policy: the agent when no --agent is given (model-free: scripted, explorer); --control `none` runs no
    controllability episodes; --predictions: every single-step turn (the world model and both baselines);
    --run-id: default derived from the configuration, so rerunning the same command resumes. The agent acts
    greedily (--temperature 0) unless told otherwise; --repeats N > 1 (samples per task) needs --temperature above 0
    for a model agent. The world model answers greedily. The headers state the temperature, samples and seed; each
    row's single-step figures against a baseline are the paired difference on the same turns (the turns of one
    episode one cluster)."""
    o = dict(locals())
    refuse_unused(o.pop("context"), _unused(o))
    o["judge_spec"] = judge_of(o)
    try:
        config = _config(o)
        details: list[dict] | None = [] if predictions is not None else None
        with world_model_of(config.simulation.world_model) as world:
            result = check_simulator(config, world, log=console.print, warn=warn, progress=progress, details=details)
    except ValueError as exc:  # no world model, no held-out turn, a bad suite, control file or flag, no Docker
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    if predictions is not None:
        write_predictions(predictions, details)
    show(result)
    report.write_text(json.dumps(result, indent=2))
    raise typer.Exit(EXIT_REJECTED if result.get("episodes", {}).get("errors") else EXIT_OK)


EPISODE_FLAGS = ("suite", "task", "output", "run_id", "repeats", "concurrency", "retries", "max_turns",
                 "command_timeout", "image", "explorer_steps", "control", "simulate_max_tokens",
                 "agent", "agent_key_env", "policy", "temperature")  # fmt: skip


def _unused(o: dict) -> dict[str, str]:
    """The flags this check does not use: the episodes' with --no-episodes, else those its agent leaves."""
    if not o["episodes"]:
        return {name: "--no-episodes runs no episode" for name in EPISODE_FLAGS}
    agents = [o["agent"]] if o["agent"] else []
    return {
        **episode_modes([o["policy"]] if not agents else [], agents),
        **when(bool(agents), {"policy": "--agent is the agent"}),
        **when(not is_endpoint(o["world_model"]), {"world_model_key_env": "only a --world-model endpoint has a key"}),
    }


def _config(o: dict) -> SimCheckConfig:
    """The config from the command's options; ValueError without a world model."""
    if not o["world_model"]:
        raise ValueError("give the world model to check: --world-model (a checkpoint folder, smollm2 or URL=MODEL)")
    agent = model_agent(o["agent"], o["agent_key_env"]) if o["agent"] else policy_agent(o["policy"])
    control = None if o["control"] in (None, "none") else o["control"]
    world = simulation(o["world_model"], o["world_model_key_env"], max_tokens=o["simulate_max_tokens"], control=control)
    split = SplitConfig(o["held_out"], DEFAULTS.split.sft_rl_share, o["split_seed"], tuple(o["held_out_family"]))
    run = CollectConfig(suites=tuple(o["suite"]), tasks=tuple(o["task"]), **{name: o[name] for name in RUN_FIELDS})
    return SimCheckConfig(corpus=o["corpus"], limit=o["limit"], plain=o["plain"], run=run, agent=agent, split=split,
                          part=o["part"], episodes=o["episodes"],
                          judge=o["judge_spec"], simulation=world,
                          sampling=dataclasses.replace(DEFAULTS.sampling, max_tokens=o["max_new_tokens"]))  # fmt: skip


RUN_FIELDS = ("output", "run_id", "repeats", "concurrency", "retries", "max_turns", "command_timeout", "image", "seed",
              "explorer_steps", "temperature")  # fmt: skip


def _percent(value) -> str:
    return f"{100 * value:.1f}" if value is not None else "-"


def _with_interval(share, interval) -> str:
    """A share in percent with its 95% interval, e.g. "85.0 [78.2, 90.1]" (the interval left out where none)."""
    if share is None or not interval:
        return _percent(share)
    return f"{_percent(share)} [{_percent(interval[0])}, {_percent(interval[1])}]"


def _score(value) -> str:
    return f"{value:.1f}" if value is not None else "-"


def show(result: dict) -> None:
    """Two tables: single step per group (world model and baselines), then the episode figures per group."""
    step = result["sampling"]["single_step"]
    title = f"sim-check: single step on held-out turns (judge: {result['judge']}; {how_sampled(step['temperature'])}, "
    title += f"<= {step['max_tokens']} new tokens, seed {step['seed']})"
    table = Table(title=title, box=box.SIMPLE_HEAD,
                  caption="faults produced / clean: on held-out turns of fault-injected episodes, whose instruction "
                  "says what was injected where")  # fmt: skip
    for column in ("group", "model", "turns", "exact % [95%]", "error flag %", "judge overall", "factuality",
                   "faults produced % [95%]", "clean %"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("group", "model") else "right")
    for group, models in result["single_step"].items():
        for i, (name, f) in enumerate(models.items()):
            control = f.get("controllability", {})
            table.add_row(group if i == 0 else "", name, str(f["turns"]),
                          _with_interval(f["exact_match"], f.get("exact_match_interval")),
                          _percent(f["error_flag_agreement"]), _score(f["judge_overall"]),
                          _score(f["judge_factuality"]), describe_produced(control),
                          _percent(control.get("clean_share")))  # fmt: skip
        table.add_section()
    out.print(table)
    out.print(paired_table(result))
    out.print(action_table(result["single_step"]))
    out.print(source_table(result["single_step"]))
    episodes = result.get("episodes")
    if episodes is not None and "note" in episodes:
        console.print(Text(episodes["note"], style="yellow"))
    elif episodes is not None:
        out.print(episode_table(result, episodes))
    for line in below_thresholds(result):  # the targets a world model worth training in reaches
        warn(f"warning: {line}")


def paired_table(result: dict) -> Table:
    """Per group, the world model minus each baseline on the same turns, with the paired 95% interval (the turns
    of one episode one cluster): the comparison, where the tables above only stand the rows side by side. Exact
    match and error flag in percentage points; factuality in points of its 0-100 score (the factuality column
    above), over the turns the judge scored for both."""
    table = Table(title=f"sim-check: {result['world_model']} minus each baseline, paired on the same turns "
                  "(95% interval, an episode's turns one cluster)", box=box.SIMPLE_HEAD,
                  caption="exact match, error flag: percentage points; factuality: points of the 0-100 "
                  "factuality score, over the turns the judge scored for both")  # fmt: skip
    for column in ("group", "baseline", "turns", "exact match", "error flag", "factuality"):
        table.add_column(column, justify="left" if column in ("group", "baseline") else "right")
    for group, models in result["single_step"].items():
        against = models[result["world_model"]].get("paired", {})
        for i, (name, figures) in enumerate(against.items()):
            exact, flag = figures["exact_match"], figures["error_flag_agreement"]
            table.add_row(group if i == 0 else "", name, str(exact["n"]), _points(exact), _points(flag),
                          _points(figures.get("judge_factuality"), scale=1.0))  # fmt: skip
        table.add_section()
    return table


def _points(paired: dict | None, scale: float = 100.0) -> str:
    """A paired difference and its interval, times `scale` (100: a share as percentage points)."""
    if paired is None:
        return "-"
    return f"{scale * paired['difference']:+.1f} [{scale * paired['low']:+.1f}, {scale * paired['high']:+.1f}]"


def action_table(single_step: dict) -> Table:
    """Exact match per action (the tool, or the shell command's program) per group, one column per model: where
    the world model loses to a baseline."""
    table = Table(title="sim-check: single-step exact % by action", box=box.SIMPLE_HEAD)
    groups = [group for group in single_step if group != "all"] or ["all"]
    names = list(single_step[groups[0]])
    for column in ("group", "action", "turns", *names):
        table.add_column(column, justify="left" if column in ("group", "action") else "right")
    for group in groups:
        for i, row in enumerate(_breakdown_rows(single_step[group], "exact_by_action")):
            table.add_row(group if i == 0 else "", *row)
        table.add_section()
    return table


def source_table(single_step: dict) -> Table:
    """Exact match per answer source (empty, in the prompt, elsewhere) over all groups, one column per model: does
    the world model fail at copying or at computing."""
    table = Table(title="sim-check: single-step exact % by where the answer is found", box=box.SIMPLE_HEAD)
    models = single_step["all"]
    names = list(models)
    for column in ("answer", "turns", *names):
        table.add_column(column, justify="left" if column == "answer" else "right")
    for row in _breakdown_rows(models, "exact_by_source"):
        table.add_row(*row)
    return table


def _breakdown_rows(models: dict, breakdown: str) -> list[list[str]]:
    """Per label of a breakdown of exact match (`exact_by_action`, `exact_by_source`): the label, its turns, then
    each model's exact % (every model is scored on the same turns, so each has every label)."""
    first = next(iter(models.values()))[breakdown]
    return [
        [label, str(figures["turns"]), *(_percent(m[breakdown][label]["exact_match"]) for m in models.values())]
        for label, figures in first.items()
    ]


def episode_table(result: dict, episodes: dict) -> Table:
    title = f"sim-check: {result['world_model']} vs the real environment, agent {result['agent']}"
    title += f"; {_agent_sampling(result)}"
    table = Table(title=title, box=box.SIMPLE_HEAD, caption="success: agreement over the episodes the simulator "
                  "decided, its interval over tasks (a task's repeats one cluster); WM2Real: per turn of the replayed "
                  "actions; control: instructed faults produced (one told for an action never answered counts, not "
                  "produced), uninstructed turns left clean (latency is not scored: no text shows it), and faults "
                  "the plan put past an episode's last action (told to no one: not counted)")  # fmt: skip
    for column in ("group", "success agree % [95%]", "decided",
                   "WM2Real exact %", "WM2Real error flag %", "sim successes real %", "faults produced % [95%]",
                   "clean turns %", "faults not reached"):  # fmt: skip
        table.add_column(column, justify="left" if column == "group" else "right")
    control = episodes.get("controllability", {})
    for group, success in episodes["success"].items():
        wm2real, ctl = episodes["wm2real"].get(group, {}), control.get(group, {})
        table.add_row(group, _with_interval(success["agreement"], success.get("agreement_interval")),
                      f"{success['decided']}/{success['episodes']}",
                      _percent(wm2real.get("exact_match")), _percent(wm2real.get("error_flag_agreement")),
                      _percent(wm2real.get("real_share_of_simulated_successes")),
                      describe_produced(ctl), _percent(ctl.get("clean_share")),
                      str(sum(ctl["not_reached"].values())) if "not_reached" in ctl else "-")  # fmt: skip
    return table


def _agent_sampling(result: dict) -> str:
    """How the episodes' agent sampled, as the episode table's title says it (the world model answers greedily)."""
    episodes = result["sampling"]["episodes"]
    how = "model-free" if episodes["model_free_agent"] else how_sampled(episodes["temperature"])
    return f"{how}, {samples_per(episodes['samples_per_task'], 'task')}, seed {episodes['seed']}; world model greedy"
