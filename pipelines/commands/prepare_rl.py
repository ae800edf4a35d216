"""`trajforge prepare-rl`: RL prompts with references and verifier specs."""

from pathlib import Path

import typer

from trajforge.pipelines.commands import EXIT_OK
from trajforge.pipelines.commands.beam_command import VERBOSE_HELP, beam_args, job_errors
from trajforge.pipelines.console import console
from trajforge.pipelines.prepare_rl.config import DEFAULT_TOKEN_BUDGET, PrepareConfig
from trajforge.schemas import counts


def prepare_rl_command(
    ctx: typer.Context,
    input: str = typer.Option("data/corpus", "--input", "-i", help="A build-corpus folder or URL (its cpt/ shards)."),
    output: str = typer.Option("data/rl", "--output", "-o", help="RL folder or URL: rl/ shards and the manifest."),
    token_budget: int = typer.Option(
        DEFAULT_TOKEN_BUDGET, min=16, help="Prompt tokens at most; the oldest history goes first."
    ),
    tokenizer: Path | None = typer.Option(None, help="Count tokens with this tokenizer (default: ~4 characters each)."),
    workers: int | None = typer.Option(None, min=1),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
) -> None:
    """Prepare RL data (paper §3.4): one turn per trajectory as a prompt capped by a token budget, with the real
    observation and a rule-verifier spec where one can be derived (stdout facts for terminals, JSON fields and
    error flags for MCP, accessibility-tree anchors for the web). Beam flags go after `--`."""
    with job_errors(verbose):
        from trajforge.pipelines.prepare_rl.pipeline import prepare_rl

        config = PrepareConfig(token_budget, str(tokenizer) if tokenizer else None)
        manifest = prepare_rl(input, output, config, beam_args(ctx), workers, verbose)
    c = manifest.counts
    console.print(
        f"[bold]prepare-rl[/]: {c[counts.READ]} trajectories, {c[counts.WRITTEN]} prompts "
        f"({c.get(counts.WITH_VERIFIER, 0)} with a verifier) -> {output}"
    )
    raise typer.Exit(EXIT_OK)
