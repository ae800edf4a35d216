"""`trajforge sandbox-image`: build (or reuse) the sandbox base image and fill the bundled MCP servers' package
cache."""

from typing import Annotated

import typer
from rich.text import Text

from trajforge.pipelines.commands import EXIT_REJECTED, EXIT_USAGE
from trajforge.pipelines.console import console, warn

Dockerfile = Annotated[bool, typer.Option("--dockerfile", help="Build FROM debian:bookworm-slim (needs a registry).")]
ServerPackages = Annotated[
    bool,
    typer.Option(
        help="Also install the bundled MCP suites' server packages (npm, PyPI) into the host cache that isolated "
        "servers mount read-only (TRAJFORGE_SERVER_CACHE, default ~/.cache/trajforge/servers)."
    ),
]


def sandbox_image_command(dockerfile: Dockerfile = False, server_packages: ServerPackages = True) -> None:
    """Build the sandbox base image (debootstrap rootfs + docker import), or reuse it when it exists, and fill the
    package cache of the bundled MCP servers (episodes have no network, so this is where npx finds them)."""
    from trajforge.collectors.collection import CollectSetupError, docker_client, prepare_environments
    from trajforge.collectors.environments import Settings
    from trajforge.collectors.tasks import SUITES_DIR, load_suite
    from trajforge.sandboxes.image import ImageBuildError, ensure_base_image

    try:
        client = docker_client()
        tag = ensure_base_image(client, use_dockerfile=dockerfile, log=console.print)
    except (CollectSetupError, ImageBuildError) as exc:
        console.print(Text(str(exc), style="red"))
        raise typer.Exit(EXIT_USAGE if isinstance(exc, CollectSetupError) else EXIT_REJECTED) from exc
    if server_packages:
        suites = [load_suite(p.stem) for p in sorted(SUITES_DIR.glob("*.yaml"))]
        if not prepare_environments(suites, Settings(run_id="sandbox-image", image=tag, docker_client=client), warn):
            raise typer.Exit(EXIT_REJECTED)
    typer.echo(tag)
