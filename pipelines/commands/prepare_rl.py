"""`trajforge prepare-rl`: RL prompts with references and verifier specs."""

from pathlib import Path

import typer

from pipelines.commands import EXIT_OK, EXIT_USAGE
from pipelines.console import console


def prepare_rl_command(
    input: Path = typer.Option(Path("data/corpus"), "--input", "-i", help="A build-corpus folder (its cpt/ shards)."),
    output: Path = typer.Option(Path("data/rl"), "--output", "-o", help="RL folder: rl/ shards and the manifest."),
    token_budget: int = typer.Option(2048, min=16, help="Prompt tokens at most; the oldest history goes first."),
    tokenizer: Path | None = typer.Option(None, help="Count tokens with this tokenizer (default: ~4 characters each)."),
    workers: int | None = typer.Option(None, min=1),
) -> None:
    """Prepare RL data (paper §3.4): one turn per trajectory as a prompt capped by a token budget, with the real
    observation and a rule-verifier spec where one can be derived (stdout facts for terminals, JSON fields and
    error flags for MCP, accessibility-tree anchors for the web)."""
    from pipelines.prepare_rl.pipeline import prepare_rl

    try:
        with console.status("running the prepare-rl pipeline (Beam)"):
            manifest = prepare_rl(input, output, token_budget, str(tokenizer) if tokenizer else None, workers=workers)
    except FileNotFoundError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    c = manifest.counts
    console.print(
        f"[bold]prepare-rl[/]: {c['read']} trajectories, {c['written']} prompts "
        f"({c.get('with_verifier', 0)} with a verifier) -> {output}"
    )
    raise typer.Exit(EXIT_OK)
