"""Commands whose issue is not done yet: they say so and exit non-zero instead of pretending."""

import typer

from pipelines.commands import EXIT_NOT_IMPLEMENTED
from pipelines.console import console

PENDING = {
    "eval": (
        "Score a checkpoint on held-out trajectories (five dimensions + verifiers).",
        7,
        "GSPO, evaluation, simulator",
    ),
}


def register(app: typer.Typer) -> None:
    for name, (help_text, issue, title) in PENDING.items():
        app.command(
            name,
            help=f"{help_text} (not implemented yet: issue #{issue})",
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        )(_pending(name, issue, title))


def _pending(name: str, issue: int, title: str):
    def command(ctx: typer.Context) -> None:
        console.print(f"[bold red]trajforge {name}[/]: not implemented yet (issue #{issue}: {title}).")
        raise typer.Exit(EXIT_NOT_IMPLEMENTED)

    return command
