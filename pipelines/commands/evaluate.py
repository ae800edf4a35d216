"""`trajforge eval`: score checkpoints or endpoints on held-out trajectories, AgentWorldBench style."""

import json
from pathlib import Path

import typer
from rich.table import Table

from pipelines.commands import EXIT_OK, EXIT_USAGE
from pipelines.console import console, out, progress


def _rows(corpus: Path | None, agentworldbench: Path | None, limit: int):
    if agentworldbench is not None:
        from schemas.formats import ImportOptions
        from schemas.formats import agentworldbench as awb

        rows = [r.record.model_dump() for r in awb.read(agentworldbench, ImportOptions()) if r.ok]
        return [r for r in rows if r["turns"]][:limit]
    from training.data import held_out_rows, load_cpt

    return list(held_out_rows(load_cpt(corpus)))[:limit]


def eval_command(
    checkpoint: list[Path] = typer.Option([], "--checkpoint", "-c", help="A checkpoint folder to score (repeatable)."),
    endpoint: list[str] = typer.Option([], help="URL=MODEL of an OpenAI-compatible endpoint to score (repeatable)."),
    corpus: Path = typer.Option(
        Path("data/corpus"), help="A build-corpus folder: its held-out tasks (the split build-corpus recorded)."
    ),
    agentworldbench: Path | None = typer.Option(None, help="Evaluate on an AgentWorldBench JSONL file instead."),
    untrained: bool = typer.Option(False, help="Also score a random-init model shaped like the first checkpoint."),
    seed: int = typer.Option(0),
    limit: int = typer.Option(50, min=1, help="Held-out trajectories at most."),
    max_new_tokens: int = typer.Option(256, min=1),
    plain: bool = typer.Option(True, help="Plain CPT-style prompts (--no-plain: the SFT reasoning templates)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report as JSON here."),
    export: Path | None = typer.Option(None, help="Write the sampled benchmark as AgentWorldBench JSONL here."),
) -> None:
    """Sample the first, last and three middle turns of each held-out trajectory, predict each observation with
    every model given, and score format, factuality, consistency, realism and quality, normalised to 0-100
    ((raw - 1) / 4 x 100), per domain and macro-averaged over domains, plus rule-verifier accuracy."""
    from training.evaluation import benchmark_queries, sample_turns, score
    from training.generators import EndpointGenerator, chat_messages
    from training.serving import LocalModel

    try:
        rows = _rows(corpus, agentworldbench, limit)
    except FileNotFoundError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    if not rows:
        console.print("[red]no held-out trajectories to evaluate on[/]")
        raise typer.Exit(EXIT_USAGE)
    queries = benchmark_queries(rows, plain)
    if export is not None:
        from schemas.arrow import trajectory_view
        from schemas.atomic import atomic_write
        from schemas.formats.agentworldbench import to_lines
        from schemas.records import Trajectory

        with atomic_write(export, "w") as f:
            for row in rows:
                record = Trajectory.model_validate(trajectory_view(row))
                for line in to_lines(record, sample_turns(len(record.turns))):
                    f.write(json.dumps(line, ensure_ascii=False) + "\n")
    models = [
        (f"{f.parent.name}/{f.name}" if f.name.startswith("checkpoint-") else f.name, LocalModel(f)) for f in checkpoint
    ]
    if untrained and checkpoint:
        models.insert(0, ("untrained", _untrained_like(checkpoint[0])))
    for spec in endpoint:
        url, _, model = spec.partition("=")
        models.append((model, EndpointGenerator(url, model, temperature=0.0, max_tokens=max_new_tokens)))
    if not models:
        console.print("[red]give at least one --checkpoint or --endpoint[/]")
        raise typer.Exit(EXIT_USAGE)
    reports = []
    for name, model in models:
        answers = []
        for query, _ in progress(queries, f"eval {name}", len(queries)):
            messages = chat_messages(query, hint=False)
            if isinstance(model, EndpointGenerator):
                answers.append(model.complete(messages, seed=seed)[0])
            else:
                answers.append(model.chat(messages, max_new_tokens, temperature=0.0, seed=seed)[0])
        report = score(name, queries, answers)
        if isinstance(model, LocalModel):
            report.heldout_loss = _heldout_loss(model, rows)
        reports.append(report)
    _table(reports)
    if output is not None:
        output.write_text(json.dumps([r.as_dict() for r in reports], indent=2))
    raise typer.Exit(EXIT_OK)


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


def _table(reports) -> None:
    from training.judge import DIMENSIONS

    table = Table(title="world-model evaluation (0-100, macro over domains)")
    table.add_column("metric")
    for report in reports:
        table.add_column(report.model, justify="right")
    for key in (*DIMENSIONS, "overall"):
        table.add_row(key, *(f"{r.macro.get(key, 0):.1f}" for r in reports))
    table.add_row("held-out loss", *(f"{r.heldout_loss:.3f}" if r.heldout_loss is not None else "-" for r in reports))
    table.add_row(
        "verifier accuracy",
        *(f"{100 * r.verifier_accuracy:.1f}" if r.verifier_accuracy is not None else "-" for r in reports),
    )
    table.add_row("samples", *(str(r.samples) for r in reports))
    out.print(table)
    for report in reports[-1:]:
        per = Table(title=f"{report.model}: per domain")
        for column in ("domain", "overall", "format", "factuality", "samples"):
            per.add_column(column)
        for domain, values in report.per_domain.items():
            per.add_row(
                domain,
                f"{values['overall']:.1f}",
                f"{values['format']:.1f}",
                f"{values['factuality']:.1f}",
                str(values["samples"]),
            )
        out.print(per)
