"""`trajforge prepare-rl`: RL prompts with references and verifier specs."""

from typing import Annotated

import typer

from trajforge.pipelines.commands import EXIT_OK, flags
from trajforge.pipelines.commands.beam_command import beam_args, job_errors
from trajforge.pipelines.console import console
from trajforge.pipelines.prepare_rl.config import DEFAULT_TOKEN_BUDGET, PrepareConfig
from trajforge.schemas import counts

TokenBudget = Annotated[int, typer.Option(min=16, help="Prompt tokens at most; the oldest history goes first.")]


def prepare_rl_command(
    ctx: typer.Context,
    input: flags.Input = "data/corpus",
    output: flags.Output = "data/rl",
    token_budget: TokenBudget = DEFAULT_TOKEN_BUDGET,
    tokenizer: flags.Tokenizer = None,
    workers: flags.Workers = None,
    verbose: flags.Verbose = False,
) -> None:
    """Prepare RL data (paper §3.4): one turn per trajectory as a prompt capped by a token budget, with the real
    observation and a rule-verifier spec where one can be derived (stdout facts for terminals, JSON fields and
    error flags for MCP, accessibility-tree anchors for the web). Beam flags go after `--`.

    --input: a build-corpus folder or URL (its cpt/ shards); --output: the RL folder or URL (rl/ shards and the
    manifest); --tokenizer: a tokenizer folder (default: ~4 characters make a token)."""
    with job_errors(verbose):
        from trajforge.pipelines.prepare_rl.pipeline import prepare_rl

        config = PrepareConfig(token_budget, tokenizer)
        manifest = prepare_rl(input, output, config, beam_args(ctx), workers, verbose)
    c = manifest.counts
    console.print(
        f"[bold]prepare-rl[/]: {c[counts.READ]} trajectories, {c[counts.WRITTEN]} prompts "
        f"({c.get(counts.WITH_VERIFIER, 0)} with a verifier) -> {output}"
    )
    raise typer.Exit(EXIT_OK)
