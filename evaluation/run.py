"""The evaluation run behind `trajforge eval`: load the items (held-out corpus turns or AgentWorldBench lines),
ask every model, judge the answers as the benchmark does, and return the reports. Models are anything that
answers chat messages (`evaluation.models.ChatModel`), built by the caller once the items are read; the run never
asks which kind it holds."""

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.endpoints.model_ref import ModelRef
from trajforge.evaluation.benchmark import Report, line_turn, sample_turns, sampled_turns, score
from trajforge.evaluation.factory import JudgeSpec
from trajforge.evaluation.models import ChatModel, Sampling, how_sampled, samples_per
from trajforge.evaluation.paired_rows import RowComparison, row_comparisons, row_label
from trajforge.evaluation.turns import PredictionTurn

BENCHMARK_TEMPERATURE = 0.6  # the published evaluator's defaults
BENCHMARK_MAX_TOKENS = 32768


class EvalInputError(ValueError):
    """Nothing can be evaluated: no readable items, or no model. The message says what to give."""


@dataclass(frozen=True)
class EvalConfig:
    models: tuple[ModelRef, ...] = ()  # the world models to score, in the order given
    untrained: bool = False  # also a random-init model shaped like the first model given as weights
    corpus: str = "data/corpus"  # a build-corpus folder or URL: its held-out tasks
    agentworldbench: Path | None = None  # benchmark lines instead of the corpus
    limit: int | None = None  # held-out trajectories (or benchmark lines) at most
    plain: bool = True  # corpus: plain CPT-style prompts (False: the SFT reasoning templates)
    temperature: float = BENCHMARK_TEMPERATURE
    max_tokens: int = BENCHMARK_MAX_TOKENS
    seed: int = 0
    judge: JudgeSpec = field(default_factory=JudgeSpec)
    export: Path | None = None  # corpus: the sampled turns as an AgentWorldBench folder
    baselines: bool = True  # also score the model-free baselines (copy previous, retrieval) on the same turns

    @property
    def weights(self) -> list[Path]:
        return [Path(m.weights) for m in self.models if m.weights is not None]

    @property
    def sampling(self) -> Sampling:
        return Sampling(self.temperature, self.max_tokens, self.seed)

    def sampling_record(self) -> dict:
        """How the run sampled, as the JSON report records it and the tables state it (`describe_sampling`)."""
        return {
            "temperature": self.temperature,
            "samples": 1,  # per turn
            "seed": self.seed,
            "per_turn_seeds": True,  # each turn its own seed, derived from `seed` and the turn's id
            "max_new_tokens": self.max_tokens,
            "agentworldbench_temperature": self.temperature == BENCHMARK_TEMPERATURE,
        }


def describe_sampling(record: dict) -> str:
    """A sampling record in words, e.g. "sampled at temperature 0.6 (AgentWorldBench's evaluator's, kept to
    reproduce the benchmark), 1 sample per turn, seed 0 (each turn its own seed from it), <= 160 new tokens"."""
    if not record:
        return "sampling not recorded"
    how = how_sampled(record["temperature"])
    if record["temperature"] != 0 and record.get("agentworldbench_temperature"):
        how += " (AgentWorldBench's evaluator's, kept to reproduce the benchmark)"
    return (
        f"{how}, {samples_per(record['samples'], 'turn')}, seed {record['seed']} (each turn its own seed from it), "
        f"<= {record['max_new_tokens']} new tokens"
    )


class Display:
    """How a run shows its progress; silent by default (the command line passes one that draws)."""

    def progress(self, items: Iterable, label: str, total: int) -> Iterable:
        return items

    @contextlib.contextmanager
    def status(self, label: str) -> Iterator[None]:
        yield

    def note(self, text: str, kind: str = "info") -> None:
        """A line worth showing (kind info, warning or error): an exported folder, a model that gave no answer,
        a bad benchmark line."""


@dataclass
class EvalResult:
    reports: list[Report]
    details: list[dict]  # one entry per (model, line): answer, prediction, judgement
    stages: list[str | None]  # the pipeline stage of each model, in report order
    rl_run: Path | None  # the run folder of an RL checkpoint, if one was scored
    judge_label: str
    rejected: list[dict]  # benchmark lines that could not be read, and why
    comparisons: list[RowComparison] = field(default_factory=list)  # paired: stage vs the one before, vs baselines
    sampling: dict = field(default_factory=dict)  # EvalConfig.sampling_record

    @property
    def sampling_text(self) -> str:
        return describe_sampling(self.sampling)


ModelBuilder = Callable[[EvalConfig, Display], list[ChatModel]]


def evaluate(config: EvalConfig, build_models: ModelBuilder, display: Display | None = None) -> EvalResult:
    """Read the items, then score the models `build_models` makes of the config (the untrained model and the world
    models it names): a checkpoint is loaded only once there is something to score."""
    display = display or Display()
    items, rows, rejected = load_items(config, display)
    models = build_models(config, display)
    if not models:
        raise EvalInputError("give at least one --world-model (a checkpoint folder, smollm2 or URL=MODEL)")
    baselines = baseline_models(config.corpus, display) if config.baselines else []
    return score_models([*models, *baselines], items, rows, rejected, config, display)


def baseline_models(corpus: str, display: Display) -> list[ChatModel]:
    """The model-free rows of every world-model table: copy the previous observation, and retrieval from the
    corpus's training split (left out, and said so, when there is no corpus to retrieve from)."""
    from trajforge.evaluation.baselines import CopyPrevious, Retrieval
    from trajforge.schemas.dataset import load_cpt, training_split_rows
    from trajforge.schemas.storage import StorageError

    try:
        rows = training_split_rows(load_cpt(corpus))
    except (FileNotFoundError, ValueError, StorageError) as exc:
        rows, why = [], str(exc)
    else:
        why = f"{corpus} holds no training-split row"
    if not len(rows):
        display.note(f"the retrieval baseline is left out: no training split to retrieve from ({why})", "warning")
        return [CopyPrevious()]
    return [CopyPrevious(), Retrieval.from_rows(rows)]


def score_models(
    models: list[ChatModel], items: list[PredictionTurn], rows: list[dict], rejected: list[dict], config: EvalConfig,
    display: Display,
) -> EvalResult:  # fmt: skip
    """Every model answers every item; the judge `config` names scores the answers."""
    judge = config.judge.build()
    reports, details = [], []
    for model in models:
        prompts = display.progress(items, f"eval {model.name}", len(items))
        answers = [
            model.answer([{"role": r, "content": c} for r, c in item.messages], config.sampling.for_item(item.id))
            for item in prompts
        ]
        with display.status(f"judging {model.name} ({judge.name})"):
            report = score(model.name, items, answers, judge, details)
        report.rejected_lines, report.sampling = rejected, config.sampling_record()
        report.heldout_loss = model.heldout_loss(rows) if rows else None
        reports.append(report)
    stages = [m.stage for m in models]
    comparisons = row_comparisons(reports, stages)
    for report, stage in zip(reports, stages, strict=True):
        report.paired = [c.as_dict() for c in comparisons if c.row == row_label(report, stage)]
    rl_run = next((m.folder.parent for m in models if m.stage == "rl" and m.folder), None)
    return EvalResult(
        reports, details, stages, rl_run, judge.label, rejected, comparisons, config.sampling_record()
    )  # fmt: skip


def load_items(config: EvalConfig, display: Display) -> tuple[list[PredictionTurn], list[dict], list[dict]]:
    """(items, held-out corpus rows, rejected benchmark lines); what cannot be read raises EvalInputError."""
    from trajforge.schemas.storage import StorageError

    rows, rejected = [], []
    try:
        if config.agentworldbench is not None:
            items, rejected = benchmark_items(config.agentworldbench, config.limit, display)
        else:
            rows = corpus_rows(config.corpus, config.limit)
            items = sampled_turns(rows, config.plain)
    except (FileNotFoundError, ValueError, StorageError) as exc:  # ShardError (a damaged shard) is a ValueError
        raise EvalInputError(str(exc)) from exc
    if not items:
        raise EvalInputError("nothing to evaluate: no held-out trajectories or valid benchmark lines")
    if config.export is not None and rows:
        export_items(rows, config.export, display)
    return items, rows, rejected


def benchmark_items(path: Path, limit: int | None, display: Display) -> tuple[list[PredictionTurn], list[dict]]:
    """(items, rejected lines): every valid line's own turn; each bad line named by file and line."""
    from trajforge.schemas.formats.agentworldbench import read_lines

    items, rejected = [], []
    for result in read_lines(path):
        if result.line is None:
            reason = "; ".join(map(str, result.problems))
            display.note(f"{result.where}: {reason}", "error")
            rejected.append({"where": result.where, "reason": reason})
        elif limit is None or len(items) < limit:
            items.append(line_turn(result.line, result.where))
    return items, rejected


def corpus_rows(corpus: str, limit: int | None, part: str = "test") -> list[dict]:
    """The held-out tasks' trajectories of one part (test, or validation), as build-corpus split them: nothing a
    training stage read."""
    from trajforge.schemas.dataset import load_cpt, part_rows

    rows = list(part_rows(load_cpt(corpus), part))
    return rows[:limit] if limit is not None else rows


def export_items(rows: list[dict], folder: Path, display: Display) -> None:
    from trajforge.schemas.arrow import trajectory_view
    from trajforge.schemas.formats.agentworldbench import export_folder
    from trajforge.schemas.records import Trajectory

    records = (Trajectory.model_validate(trajectory_view(row)) for row in rows)
    summary = export_folder(((r, sample_turns(len(r.turns))) for r in records), folder)
    skipped = ", ".join(f"{n} {d}" for d, n in sorted(summary.skipped.items()))
    display.note(
        f"exported {summary.count} benchmark lines -> {folder}" + (f" (skipped: {skipped})" if skipped else "")
    )
