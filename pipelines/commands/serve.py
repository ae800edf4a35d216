"""`trajforge serve`: a checkpoint as an OpenAI-compatible endpoint (the server is `training.serving`)."""

from pathlib import Path
from typing import Annotated

import typer

from trajforge.pipelines.commands import EXIT_USAGE, flags
from trajforge.pipelines.console import console

Checkpoint = Annotated[Path, typer.Argument(help="A checkpoint folder (weights, config, tokenizer).")]
Host = Annotated[str, typer.Option(help="Bind address. Anything but loopback (e.g. 0.0.0.0) needs --api-key.")]
ModelName = Annotated[str | None, typer.Option(help="The model id clients ask for (default: the folder name).")]
ApiKey = Annotated[
    str | None,
    typer.Option(
        envvar="TRAJFORGE_API_KEY",
        help="Require `Authorization: Bearer KEY` on every request (env TRAJFORGE_API_KEY keeps it out of `ps`).",
    ),
]


def serve_command(
    checkpoint: Checkpoint,
    host: Host = "127.0.0.1",
    port: flags.Port = 8000,
    model_name: ModelName = None,
    api_key: ApiKey = None,
) -> None:
    """Serve a checkpoint as an OpenAI-compatible endpoint: /v1/chat/completions and /v1/models.

    Refuses to bind a non-loopback address without an API key: the endpoint would be open to the network."""
    import uvicorn

    from trajforge.training.serving import LocalModel, build_app, is_loopback

    if not is_loopback(host) and not api_key:
        console.print(
            f"[red]refusing to serve on {host} without an API key: anyone who can reach it could use the model. "
            "Set --api-key (or TRAJFORGE_API_KEY), or bind 127.0.0.1.[/]"
        )
        raise typer.Exit(EXIT_USAGE)
    if not (checkpoint / "config.json").exists():
        console.print(f"[red]{checkpoint} is not a checkpoint folder (no config.json)[/]")
        raise typer.Exit(EXIT_USAGE)
    name = model_name or checkpoint.name
    app = build_app(LocalModel(checkpoint), name, api_key=api_key or None)
    auth = " (Authorization: Bearer required)" if api_key else ""
    console.print(f"serving {name} on http://{host}:{port}/v1{auth}")
    uvicorn.run(app, host=host, port=port, log_level="warning")
