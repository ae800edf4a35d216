"""The `trajforge` subcommands, one module per job."""

# Exit codes shared by every command.
EXIT_OK = 0
EXIT_REJECTED = 1  # the command ran, and some input records were rejected (see the rejection file)
EXIT_USAGE = 2  # bad arguments (typer's own code for usage errors)


def require_inputs(inputs, suffixes: tuple[str, ...]) -> list:
    """The data files under INPUTS; a path that does not exist or is of the wrong kind is a usage error."""
    import typer

    from pipelines.console import console
    from schemas.sources import find_files

    files, missing = find_files(inputs, suffixes)
    for result in missing:
        console.print(f"[red]{result.source}[/]: {'; '.join(result.reasons())}")
    if missing:
        raise typer.Exit(EXIT_USAGE)
    return files
