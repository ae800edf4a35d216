"""`trajforge curate-sft`: the SFT curation Beam job."""

from pathlib import Path

import typer

from pipelines.commands import EXIT_OK
from pipelines.commands.beam_command import VERBOSE_HELP, beam_args, job_errors, quiet_logging
from pipelines.commands.judge_options import with_judge_options
from pipelines.console import console


def _generator_factory(kind: str, url: str | None, model: str | None, checkpoint: Path | None, max_new_tokens: int):
    """A picklable factory: each Beam worker builds its own generator."""
    if kind == "endpoint":
        if not url or not model:
            raise ValueError("--generator endpoint needs --generator-url and --generator-model")
        return _Factory("training.generators", "EndpointGenerator", url, model, None, 0.8, max_new_tokens)
    if kind == "checkpoint":
        if checkpoint is None or not (checkpoint / "config.json").exists():
            raise ValueError("--generator checkpoint needs --checkpoint FOLDER (with config.json)")
        return _Factory("training.generators", "CheckpointGenerator", str(checkpoint), max_new_tokens)
    if kind == "rationalization":
        return _Factory("training.generators", "RationalizationGenerator")
    raise ValueError(f"unknown --generator {kind!r}: endpoint, checkpoint or rationalization")


class _Factory:
    def __init__(self, module: str, name: str, *args):
        self.module, self.name, self.args = module, name, args

    def __call__(self):
        import importlib

        return getattr(importlib.import_module(self.module), self.name)(*self.args)


@with_judge_options
def curate_sft_command(
    ctx: typer.Context,
    input: str = typer.Option("data/corpus", "--input", "-i", help="A build-corpus folder or URL (its cpt/ shards)."),
    output: str = typer.Option("data/sft", "--output", "-o", help="SFT folder or URL: sft/ shards, scores, manifest."),
    generator: str = typer.Option(
        "rationalization",
        help="checkpoint (a local model) or endpoint (any OpenAI-compatible API): model rollouts, rejection "
        "sampling proper; or rationalization (no model: the real observation with reasoning written toward it, "
        "counted apart).",
    ),
    generator_url: str | None = typer.Option(None, envvar="TRAJFORGE_GENERATOR_URL"),
    generator_model: str | None = typer.Option(None, envvar="TRAJFORGE_GENERATOR_MODEL"),
    checkpoint: Path | None = typer.Option(None, help="Checkpoint folder for --generator checkpoint."),
    judge_spec=None,
    candidates: int = typer.Option(3, min=1, max=16, help="Candidates per query (best of N)."),
    threshold: float = typer.Option(3.5, min=1.0, max=5.0, help="Queries whose best mean score is lower are dropped."),
    per_trajectory: int = typer.Option(4, min=1, help="Queries (in-loss turns) per trajectory at most."),
    hint: bool = typer.Option(
        False,
        help="Hint-conditioned rationalization: a model generator sees the real observation (its samples count "
        "as rationalized, not as rollouts).",
    ),
    seed: int = typer.Option(0),
    max_new_tokens: int = typer.Option(512, min=1, help="Longest candidate a model generator may write."),
    workers: int | None = typer.Option(None, min=1),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
) -> None:
    """Curate SFT data (paper §3.3): for each query (an in-loss turn with its history), N candidates of the form
    <think>...</think><predicted_observation>...</predicted_observation>, judged on format, factuality,
    consistency, realism and quality; the best of N is kept when it reaches the threshold. Every query's scores
    go to OUTPUT/_scores.jsonl; system prompts vary over several templates, picked per sample. Beam flags go
    after `--`."""
    quiet_logging(verbose)
    from pipelines.curate_sft.pipeline import curate_sft

    with job_errors(verbose):
        make_generator = _generator_factory(generator, generator_url, generator_model, checkpoint, max_new_tokens)
        manifest = curate_sft(
            input,
            output,
            make_generator,
            judge_spec,
            {"generator": generator, **judge_spec.as_config()},
            candidates,
            threshold,
            per_trajectory,
            hint,
            seed,
            beam_args=beam_args(ctx),
            workers=workers,
            verbose=verbose,
        )
    console.print(summary_line(manifest.counts, output), highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_OK)


def summary_line(c: dict[str, int], output: str) -> str:
    """Queries, the acceptance rate, and where the kept samples came from: model rollouts or rationalization."""
    rate = c["written"] / c["read"] if c["read"] else 0.0
    skipped = sum(n for k, n in c.items() if k.startswith("rows_skipped."))
    return (
        f"[bold]curate-sft[/]: {c['read']} queries, {c['written']} kept (acceptance {rate:.1%}), "
        f"{c.get('filtered.below_threshold', 0)} below the threshold; kept samples: "
        f"{c.get('kept.rollout', 0)} sampled from a model, {c.get('kept.rationalization', 0)} rationalized "
        f"({c.get('kept.verbatim_reference', 0)} of all kept are the verbatim reference observation); "
        f"{skipped} corpus rows not for SFT (held out or CPT-only) -> {output}"
    )
