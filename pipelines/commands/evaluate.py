"""`trajforge eval`: score checkpoints or endpoints on held-out trajectories or AgentWorldBench lines, as the
benchmark scores them, with the judge the options name."""

import json
from pathlib import Path

import typer
from rich.table import Table

from pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE
from pipelines.commands.judge_options import with_judge_options
from pipelines.console import console, out, progress

BENCHMARK_TEMPERATURE = 0.6  # the published evaluator's defaults
BENCHMARK_MAX_TOKENS = 32768


def _benchmark_items(path: Path, limit: int | None):
    """(items, rejected lines): every valid line's own turn; each bad line named by file and line."""
    from evaluation.items import line_item
    from schemas.formats.agentworldbench import read_lines

    items, rejected = [], []
    for result in read_lines(path):
        if result.line is None:
            reason = "; ".join(map(str, result.problems))
            console.print(f"[red]{result.where}[/]: {reason}")
            rejected.append({"where": result.where, "reason": reason})
        elif limit is None or len(items) < limit:
            items.append(line_item(result.line, result.where))
    return items, rejected


def _corpus_rows(corpus: Path, limit: int | None):
    """The held-out tasks' trajectories, as build-corpus split them: nothing a training stage read."""
    from training.data import held_out_rows, load_cpt

    rows = list(held_out_rows(load_cpt(corpus)))
    return rows[:limit] if limit is not None else rows


def _export(rows, folder: Path) -> None:
    from evaluation.benchmark import sample_turns
    from schemas.arrow import trajectory_view
    from schemas.formats.agentworldbench import export_folder
    from schemas.records import Trajectory

    records = (Trajectory.model_validate(trajectory_view(row)) for row in rows)
    summary = export_folder(((r, sample_turns(len(r.turns))) for r in records), folder)
    skipped = ", ".join(f"{n} {d}" for d, n in sorted(summary.skipped.items()))
    console.print(
        f"exported {summary.count} benchmark lines -> {folder}" + (f" (skipped: {skipped})" if skipped else "")
    )


@with_judge_options
def eval_command(
    checkpoint: list[Path] = typer.Option([], "--checkpoint", "-c", help="A checkpoint folder to score (repeatable)."),
    endpoint: list[str] = typer.Option([], help="URL=MODEL of an OpenAI-compatible endpoint to score (repeatable)."),
    corpus: Path = typer.Option(Path("data/corpus"), help="A build-corpus folder: its held-out tasks."),
    agentworldbench: Path | None = typer.Option(
        None,
        help="Evaluate on AgentWorldBench lines instead: a .jsonl file, or a folder of *_test.jsonl files. Each "
        "line is scored at its own turn_idx, prompted exactly as the benchmark prompts.",
    ),
    untrained: bool = typer.Option(False, help="Also score a random-init model shaped like the first checkpoint."),
    seed: int = typer.Option(0, help="Sampling seed for every model."),
    limit: int | None = typer.Option(
        None, min=1, help="Held-out trajectories (or benchmark lines) at most; default: all."
    ),
    temperature: float = typer.Option(BENCHMARK_TEMPERATURE, min=0.0, help="Sampling temperature (the benchmark's)."),
    max_tokens: int = typer.Option(
        BENCHMARK_MAX_TOKENS,
        "--max-tokens",
        "--max-new-tokens",
        min=1,
        help="Longest answer (the benchmark's room for long reasoning; a local model stops at its context).",
    ),
    plain: bool = typer.Option(True, help="Corpus: plain CPT-style prompts (--no-plain: the SFT reasoning templates)."),
    judge_spec=None,
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the reports as JSON here."),
    predictions: Path | None = typer.Option(
        None, help="Write every line's answer, extracted prediction and judgement as JSONL here (all models)."
    ),
    export: Path | None = typer.Option(
        None, help="Corpus: write the sampled turns as an AgentWorldBench folder ({task}_test.jsonl) here."
    ),
) -> None:
    """Predict observations with every model given and judge them on format, factuality, consistency, realism
    and quality, normalised to 0-100 ((raw - 1) / 4 x 100), per domain, pooled over lines and averaged over
    domains, with format compliance (answers with a <predicted_observation> block) and rule-verifier accuracy.
    Corpus: the first, last and three middle turns of each held-out trajectory. A line without an answer or
    whose judge failed is excluded and counted, never scored as zero. Every report names its judge."""
    from evaluation.benchmark import score
    from evaluation.items import corpus_items
    from training.generators import EndpointGenerator
    from training.serving import LocalModel

    rows, rejected = [], []
    try:
        if agentworldbench is not None:
            items, rejected = _benchmark_items(agentworldbench, limit)
        else:
            rows = _corpus_rows(corpus, limit)
            items = corpus_items(rows, plain)
    except (FileNotFoundError, ValueError) as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    if not items:
        console.print("[red]nothing to evaluate: no held-out trajectories or valid benchmark lines[/]")
        raise typer.Exit(EXIT_USAGE)
    if export is not None and rows:
        _export(rows, export)
    models = [
        (f"{f.parent.name}/{f.name}" if f.name.startswith("checkpoint-") else f.name, LocalModel(f)) for f in checkpoint
    ]
    if untrained and checkpoint:
        models.insert(0, ("untrained", _untrained_like(checkpoint[0])))
    for entry in endpoint:
        url, _, model = entry.partition("=")
        models.append((model, EndpointGenerator(url, model, temperature=temperature, max_tokens=max_tokens)))
    if not models:
        console.print("[red]give at least one --checkpoint or --endpoint[/]")
        raise typer.Exit(EXIT_USAGE)
    the_judge = judge_spec.build()
    reports, details = [], []
    for name, model in models:
        answers = [
            _answer(model, [{"role": r, "content": c} for r, c in item.messages], temperature, max_tokens, seed)
            for item in progress(items, f"eval {name}", len(items))
        ]
        with console.status(f"judging {name} ({the_judge.name})"):
            report = score(name, items, answers, the_judge, details)
        report.rejected_lines = rejected
        if isinstance(model, LocalModel) and rows:
            report.heldout_loss = _heldout_loss(model, rows)
        reports.append(report)
    _table(reports, the_judge.label)
    _stage_effects(reports, models, the_judge.label)
    if output is not None:
        output.write_text(json.dumps([r.as_dict() for r in reports], indent=2))
    if predictions is not None:
        predictions.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in details))
    raise typer.Exit(EXIT_REJECTED if rejected else EXIT_OK)


def _answer(model, messages: list[dict], temperature: float, max_tokens: int, seed: int) -> str | None:
    """The model's answer; None when it gave none (a failed request counts as no answer, as the benchmark's does)."""
    from training.generators import EndpointGenerator

    if isinstance(model, EndpointGenerator):
        import httpx

        try:
            return model.complete(messages, seed=seed)[0]
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            console.print(f"[yellow]{model.name}: no answer ({str(exc).splitlines()[0][:160]})[/]")
            return None
    return model.chat(messages, max_tokens, temperature=temperature, seed=seed)[0]


def _heldout_loss(model, rows) -> float:
    """Teacher-forced loss per observation token on the held-out trajectories: what training lowers first."""
    from training.distributed import World
    from training.loop import LoopConfig, evaluate
    from training.sequences import packed_sequences

    length = min(512, model.model.config.max_position_embeddings)
    sequences = packed_sequences(rows, model.tokenizer, length, mask_mode="all")
    return evaluate(model.model, sequences, LoopConfig(batch_size=4), World())


def _untrained_like(folder: Path):
    """The same architecture and tokenizer, random weights: what training bought, measured."""
    import torch
    from transformers import AutoModelForCausalLM

    from training.serving import LocalModel

    untrained = LocalModel(folder)
    torch.manual_seed(0)
    untrained.model = AutoModelForCausalLM.from_config(untrained.model.config).eval()
    return untrained


def _stage_effects(reports, models, judge_label: str) -> None:
    """With checkpoints of at least two pipeline stages: a row per model and what each stage did, in plain words."""
    from training.serving import LocalModel
    from training.stage_effects import reading, stage_of, stage_table

    stages = [
        "untrained" if name == "untrained" else stage_of(model.folder) if isinstance(model, LocalModel) else None
        for name, model in models
    ]
    if len({s for s in stages if s}) < 2:
        return
    rl_run = next((model.folder.parent for (_, model), s in zip(models, stages, strict=True) if s == "rl"), None)
    out.print(stage_table(reports, stages, judge_label))
    for line in reading(reports, stages, rl_run):
        out.print(f"  {line}")


def _figure(value: float | None, scale: float = 1.0) -> str:
    return f"{scale * value:.1f}" if value is not None else "-"


def _table(reports, judge_label: str) -> None:
    from evaluation.scores import DIMENSIONS

    table = Table(title=f"world-model evaluation (0-100), judge: {judge_label}")
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
    table.add_row("lines scored / sampled", *(f"{r.scored}/{r.samples}" for r in reports))
    table.add_row("excluded", *(", ".join(f"{n} {k}" for k, n in r.excluded.items()) or "0" for r in reports))
    out.print(table)
    for report in reports[-1:]:
        per = Table(title=f"{report.model}: per domain")
        for column in ("domain", "overall", *DIMENSIONS, "scored/lines"):
            per.add_column(column)
        for domain, values in report.per_domain.items():
            per.add_row(
                domain,
                *(_figure(values.get(k)) for k in ("overall", *DIMENSIONS)),
                f"{values['scored']}/{values['lines']}",
            )
        out.print(per)
