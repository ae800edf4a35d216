"""The one console and progress bar every command uses (to stderr, so stdout stays for data and SQL)."""

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

T = TypeVar("T")


def pipe_width(stream) -> int | None:
    """A terminal's own width; 160 columns (or $COLUMNS) into a file or a pipe, where rich would assume 80 and cut
    a table's headers to "untrai…" in every log (and --help's option names to "--simulate-key-e…")."""
    if stream.isatty():
        return None
    return int(os.environ.get("COLUMNS") or 160)


console = Console(stderr=True, width=pipe_width(sys.stderr))
out = Console(soft_wrap=True, width=pipe_width(sys.stdout))


def warn(message: str) -> None:
    """A warning line, in yellow, taken literally (brackets in paths are not markup)."""
    console.print(Text(message, style="yellow"))


def progress(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate with a live bar (a spinner and a count when the total is unknown); silent when not a terminal."""
    columns = [
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)
