"""The `trajforge` subcommands, one module per job."""

# Exit codes shared by every command.
EXIT_OK = 0
EXIT_REJECTED = 1  # the command ran, and some input records were rejected (see the rejection file)
EXIT_USAGE = 2  # bad arguments (typer's own code for usage errors)


def require_inputs(inputs, suffixes: tuple[str, ...]) -> list:
    """The data files under INPUTS (folders, files or URLs): local ones as Paths, URLs as strings; a path that does
    not exist or is of the wrong kind is a usage error."""
    from pathlib import Path

    import typer
    from rich.markup import escape

    from trajforge.pipelines.console import console
    from trajforge.schemas import storage
    from trajforge.schemas.sources import find_data_files

    try:
        found, missing = find_data_files(inputs, suffixes)
    except storage.StorageError as exc:
        console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    files = [f.path if storage.is_url(f.path) else Path(f.path) for f in found]
    for result in missing:
        console.print(f"[red]{result.source}[/]: {'; '.join(result.reasons())}")
    if missing:
        raise typer.Exit(EXIT_USAGE)
    return files
