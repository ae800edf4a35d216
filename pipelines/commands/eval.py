"""`trajforge eval`: score checkpoints or endpoints on held-out trajectories or AgentWorldBench lines, as the
benchmark scores them, with the judge the options name. The run itself is `evaluation.run.evaluate`; the models it
scores are built here (a checkpoint and an untrained model are training's, an endpoint evaluation's)."""

import contextlib
import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from trajforge.collectors.simulation import WORLD_MODEL_KEY_ENV
from trajforge.endpoints import EndpointError
from trajforge.endpoints.model_ref import parse_model
from trajforge.evaluation.models import ChatModel
from trajforge.evaluation.run import Display, EvalConfig, EvalResult, evaluate
from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, flags
from trajforge.pipelines.commands.judge_options import JUDGE_DEFAULTS, KEY_ENV, judge_of
from trajforge.pipelines.commands.unused_flags import is_endpoint, refuse_unused, when
from trajforge.pipelines.console import console, out, progress

DEFAULTS = EvalConfig()
STYLES = {"error": "red", "warning": "yellow"}

AgentWorldBench = Annotated[
    Path | None,
    typer.Option(
        help="Evaluate on AgentWorldBench lines instead: a .jsonl file, or a folder of *_test.jsonl files. Each "
        "line is scored at its own turn_idx, prompted exactly as the benchmark prompts."
    ),
]
Untrained = Annotated[bool, typer.Option(help="Also score a random-init model shaped like the first checkpoint.")]
Baselines = Annotated[
    bool,
    typer.Option(
        help="Also score two model-free baselines on the same turns: copy the previous observation, and "
        "retrieval (the observation after the most similar action of the corpus's training split)."
    ),
]
Export = Annotated[
    Path | None,
    typer.Option(help="Corpus: write the sampled turns as an AgentWorldBench folder ({task}_test.jsonl) here."),
]


def write_predictions(path: Path, details: list[dict]) -> None:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in details))


def eval_command(
    context: typer.Context,
    world_model: flags.WorldModels = [],  # noqa: B006 - typer copies list defaults
    world_model_key_env: flags.WorldModelKeyEnv = WORLD_MODEL_KEY_ENV,
    corpus: flags.Corpus = DEFAULTS.corpus,
    agentworldbench: AgentWorldBench = DEFAULTS.agentworldbench,
    untrained: Untrained = DEFAULTS.untrained,
    seed: flags.Seed = DEFAULTS.seed,
    limit: flags.Limit = DEFAULTS.limit,
    temperature: flags.Temperature = DEFAULTS.temperature,
    max_new_tokens: flags.MaxNewTokens = DEFAULTS.max_tokens,
    plain: flags.Plain = DEFAULTS.plain,
    judge: flags.Judge = JUDGE_DEFAULTS.kind,
    judge_url: flags.JudgeUrl = None,
    judge_model: flags.JudgeModel = None,
    judge_key_env: flags.JudgeKeyEnv = KEY_ENV,
    rubrics: flags.Rubrics = None,
    judge_timeout: flags.JudgeTimeout = JUDGE_DEFAULTS.timeout,
    report: flags.OptionalReport = None,
    predictions: flags.Predictions = None,
    export: Export = DEFAULTS.export,
    baselines: Baselines = DEFAULTS.baselines,
) -> None:
    """Predict observations with every model given and judge them on format, factuality, consistency, realism
    and quality, normalised to 0-100 ((raw - 1) / 4 x 100), per domain, pooled over lines and averaged over
    domains, with format compliance (answers with a <predicted_observation> block) and rule-verifier accuracy.
    Corpus: the first, last and three middle turns of each held-out trajectory. Every model is scored on every
    turn: an empty prediction is right where the real observation is empty (100) and wrong elsewhere (0), no
    answer is a miss (0); only a turn whose judge failed is left out, and counted. Each row prints its turns; the
    aggregate of AgentWorldBench's reader (empty answers dropped) is kept apart, labelled. Models are compared
    by paired differences over the same turns (95% intervals, an episode's turns one cluster): each stage with
    the one before, every model with the baselines. Every report names its judge and how it sampled.

    Repeat --world-model to score several. --corpus: a folder or a URL (s3://bucket/corpus, staged to a local
    cache), its held-out tasks; --limit: held-out trajectories (or benchmark lines) at most; --temperature and
    --max-new-tokens: the benchmark's by default (its room for long reasoning; a local model stops at its
    context); --plain: for corpus turns; --seed: every model's sampling. --report's table is drawn beside it (the
    same name, .png: a bar per model and dimension); --predictions: every line's answer, of every model."""
    judge_spec = judge_of(locals())
    sampling = {"temperature": temperature, "max_tokens": max_new_tokens, "seed": seed}
    refuse_unused(context, {
        **when(agentworldbench is not None, {name: "it reads a corpus; --agentworldbench scores benchmark lines"
                                             for name in ("corpus", "plain", "export")}),
        **when(not any(map(is_endpoint, world_model)), {"world_model_key_env": "only a --world-model endpoint has "
                                                        "a key"}),
        **when(all(map(is_endpoint, world_model)), {"untrained": "it takes the shape of a --world-model given as "
                                                    "weights (a folder); none is"}),
    })  # fmt: skip
    try:
        models = tuple(parse_model(m, "--world-model", world_model_key_env) for m in world_model)
        config = EvalConfig(models, untrained, corpus=corpus, agentworldbench=agentworldbench, limit=limit,
                            plain=plain, judge=judge_spec, export=export, baselines=baselines, **sampling)  # fmt: skip
        result = evaluate(config, build_models, ConsoleDisplay())
    except (ValueError, EndpointError) as exc:  # nothing to evaluate, a bad model; a judge that refuses all
        console.print(Text(str(exc), style="red"), soft_wrap=True)  # Text: brackets in paths are not markup
        raise typer.Exit(EXIT_USAGE) from exc
    show(result)
    if report is not None:
        write_reports(report, [r.as_dict() for r in result.reports])
    if predictions is not None:
        write_predictions(predictions, result.details)
    raise typer.Exit(EXIT_REJECTED if result.rejected else EXIT_OK)


def write_reports(output: Path, reports: list[dict]) -> None:
    """The reports as JSON, and their table as a chart beside it (a bar per model and dimension)."""
    from trajforge.pipelines.charts import chart_beside, save_chart
    from trajforge.pipelines.result_charts import evaluation_chart, evaluation_title

    output.write_text(json.dumps(reports, indent=2))
    chart = save_chart(evaluation_chart(reports), chart_beside(output), evaluation_title(reports))
    console.print(f"eval: {output}, chart {chart}")


def build_models(config: EvalConfig, display: Display) -> list[ChatModel]:
    """The untrained model first (when asked), then the world models in the order given."""
    from trajforge.evaluation.models import EndpointModel
    from trajforge.training.chat_models import CheckpointModel, UntrainedModel
    from trajforge.training.model import resolve_init

    models: list[ChatModel] = []
    for ref in config.models:
        if ref.endpoint is not None:
            endpoint = dataclasses.replace(ref.endpoint, timeout=300.0)
            models.append(EndpointModel(endpoint, lambda text: display.note(text, "warning")))
        else:
            models.append(CheckpointModel(Path(resolve_init(ref.weights))))
    if config.untrained and config.weights:
        models.insert(0, UntrainedModel(Path(resolve_init(str(config.weights[0])))))
    return models


class ConsoleDisplay:
    """A run's progress bars, spinners and notes on the console (stderr)."""

    def progress(self, items: Iterable, label: str, total: int) -> Iterable:
        return progress(items, label, total)

    @contextlib.contextmanager
    def status(self, label: str) -> Iterator[None]:
        with console.status(label):
            yield

    def note(self, text: str, kind: str = "info") -> None:
        console.print(Text(text, style=STYLES.get(kind, "")), soft_wrap=True)


def show(result: EvalResult) -> None:
    """The reports table, the last model's per-domain table, each model against the baselines (paired), and (with
    two stages or more) what each stage did, each stage against the one before (paired)."""
    from trajforge.evaluation.paired_rows import baseline_reading
    from trajforge.evaluation.stage_effects import reading, stage_table

    _table(result)
    for line in baseline_reading(result.comparisons):  # a world model worth simulating in beats both on facts
        out.print(f"  {line}")
    if len({s for s in result.stages if s}) < 2:
        return
    out.print(stage_table(result.reports, result.stages, result.judge_label, result.sampling_text))
    for line in reading(result.reports, result.stages, result.comparisons, rl_reward_trend(result.rl_run)):
        out.print(f"  {line}")


def rl_reward_trend(run: Path | None) -> dict:
    """The mean reward over the first and the last steps of the RL run that made a scored checkpoint ({}: none)."""
    if run is None:
        return {}
    from trajforge.training.metrics_log import METRICS_NAME
    from trajforge.training.rl import reward_trend

    return reward_trend(run / METRICS_NAME)


def _figure(value: float | None, scale: float = 1.0) -> str:
    return f"{scale * value:.1f}" if value is not None else "-"


def _table(result: EvalResult) -> None:
    from trajforge.evaluation.baselines import BASELINES
    from trajforge.evaluation.benchmark import READER_LABEL
    from trajforge.evaluation.paired_rows import shared_turns
    from trajforge.evaluation.scores import DIMENSIONS

    reports = result.reports
    table = Table(
        title=f"world-model evaluation (0-100), judge: {result.judge_label}; {result.sampling_text}",
        caption=f"{shared_turns(reports, [r.model for r in reports])}; an empty prediction is scored (right where "
        f"the real observation is empty), no answer is a miss. Below the line: {READER_LABEL}.",
    )
    table.add_column("metric")
    for report in reports:
        table.add_column(report.model, justify="right")
    for key in DIMENSIONS:
        table.add_row(key, *(_figure(r.pooled.get(key)) for r in reports))
    table.add_row("overall (pooled)", *(_figure(r.pooled.get("overall")) for r in reports))
    table.add_row("overall (equal-weight domains)", *(_figure(r.equal_weight.get("overall")) for r in reports))
    table.add_row("format compliance %", *(_figure(r.format_compliance, 100) for r in reports))
    table.add_row("verifier accuracy %", *(_figure(r.verifier_accuracy, 100) for r in reports))
    table.add_row("held-out loss", *(f"{r.heldout_loss:.3f}" if r.heldout_loss is not None else "-" for r in reports))
    table.add_row("turns scored / asked", *(f"{r.scored}/{r.samples}" for r in reports))
    table.add_row("empty predictions / no answer", *(f"{r.empty_predictions} / {r.unanswered}" for r in reports))
    table.add_row("judge failed (no scores)", *(", ".join(f"{n} {k}" for k, n in r.excluded.items()) or "0"
                                                  for r in reports))  # fmt: skip
    table.add_section()
    reader = [r.agentworldbench_reader for r in reports]
    table.add_row("AgentWorldBench reader: overall", *(_figure(a.get("pooled", {}).get("overall")) for a in reader))
    table.add_row("AgentWorldBench reader: lines kept", *(str(a.get("lines", "-")) for a in reader))
    out.print(table)
    models = [r for r in reports if r.model not in BASELINES] or reports
    for report in models[-1:]:  # the last model's, not a baseline's
        _per_domain(report)


def _per_domain(report) -> None:
    from trajforge.evaluation.scores import DIMENSIONS

    per = Table(title=f"{report.model}: per domain")
    for column in ("domain", "overall", *DIMENSIONS, "scored/turns"):
        per.add_column(column)
    for domain, values in report.per_domain.items():
        per.add_row(
            domain,
            *(_figure(values.get(k)) for k in ("overall", *DIMENSIONS)),
            f"{values['scored']}/{values['lines']}",
        )
    out.print(per)
