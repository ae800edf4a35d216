"""`trajforge collect` and `trajforge sandbox-image`: run episodes in sandboxes, record raw trajectories."""

import dataclasses
from enum import Enum

import typer
from rich.table import Table
from rich.text import Text

from pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE
from pipelines.console import console, progress
from schemas import storage
from schemas.hashing import config_hash

POLICY_NAMES = ("scripted", "explorer", "llm")  # collectors.policies.POLICIES, without importing every policy
PolicyChoice = Enum("PolicyChoice", {name: name for name in POLICY_NAMES}, type=str)


def _docker():
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means no usable daemon
        console.print(f"[red]no Docker daemon reachable ({exc}).[/] Start it (e.g. `dockerd &`) and run again.")
        raise typer.Exit(EXIT_USAGE) from exc
    return client


def sandbox_image_command(
    dockerfile: bool = typer.Option(False, "--dockerfile", help="Build FROM debian:bookworm-slim (needs a registry)."),
    server_packages: bool = typer.Option(
        True,
        help="Also install the bundled MCP suites' server packages (npm, PyPI) into the host cache that isolated "
        "servers mount read-only (TRAJFORGE_SERVER_CACHE, default ~/.cache/trajforge/servers).",
    ),
) -> None:
    """Build the sandbox base image (debootstrap rootfs + docker import), or reuse it when it exists, and fill the
    package cache of the bundled MCP servers (episodes have no network, so this is where npx finds them)."""
    from sandboxes.image import ImageBuildError, ensure_base_image

    client = _docker()
    try:
        tag = ensure_base_image(client, use_dockerfile=dockerfile, log=console.print)
    except ImageBuildError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_REJECTED) from exc
    if server_packages:
        from collectors.environments import Settings
        from collectors.tasks import SUITES_DIR, load_suite

        suites = [load_suite(p.stem) for p in sorted(SUITES_DIR.glob("*.yaml"))]
        if not _prepare_mcp_packages(suites, Settings(run_id="sandbox-image", image=tag, docker_client=client)):
            raise typer.Exit(EXIT_REJECTED)
    typer.echo(tag)


def collect_command(
    suite: list[str] = typer.Option(
        ["terminal", "swe"], "--suite", "-s", help="Bundled suite name or a .yaml path; repeatable."
    ),
    policy: PolicyChoice = typer.Option(
        PolicyChoice.scripted,
        help="scripted: replay the task's actions; explorer: sample commands from a grammar; "
        "llm: an OpenAI-compatible model.",
    ),
    output: str = typer.Option(
        "data/raw",
        "--output",
        "-o",
        help="Runs go to OUTPUT/<run-id>/: a folder or a URL (s3://bucket/raw; S3 settings from the AWS "
        "environment, e.g. AWS_ENDPOINT_URL_S3).",
    ),
    run_id: str | None = typer.Option(
        None, help="Default: derived from the configuration, so rerunning the same command resumes."
    ),
    repeats: int = typer.Option(1, min=1, help="Episodes per task."),
    concurrency: int = typer.Option(2, min=1, help="Episodes in parallel."),
    shard: str = typer.Option("0/1", help="Run only shard i of n (i/n), to split one run across machines."),
    retries: int = typer.Option(
        2, min=0, help="Retries of an episode after an infrastructure failure (never after an agent failure)."
    ),
    max_turns: int = typer.Option(30, min=1, help="Turns before an episode ends as a timeout."),
    command_timeout: float = typer.Option(10.0, min=0.1, help="Seconds before a command is interrupted."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    image: str | None = typer.Option(None, help="Sandbox image (default: the base image, built if missing)."),
    seed: int = typer.Option(0, help="Seed of the explorer and the LLM sampling."),
    explorer_steps: int = typer.Option(8, min=1, help="Commands per explorer episode."),
    llm_url: str | None = typer.Option(
        None, envvar="TRAJFORGE_LLM_URL", help="Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1"
    ),
    llm_model: str | None = typer.Option(None, envvar="TRAJFORGE_LLM_MODEL", help="Model name for the llm policy."),
    flush_every: int = typer.Option(8, min=1, help="Episodes per raw segment (a kill loses at most this many)."),
    faults: str | None = typer.Option(
        None, help="Inject faults into every environment: a bundled config (unreliable) or a YAML path."
    ),
    simulate: str | None = typer.Option(
        None,
        help="URL=MODEL: run every episode against a world model at an OpenAI-compatible endpoint "
        "(e.g. `trajforge serve`) instead of the real environment; trajectories are marked simulated.",
    ),
    simulation_instruction: str = typer.Option(
        "", help="With --simulate: how the world model should behave (e.g. 'fail one call in five with a 503')."
    ),
) -> None:
    """Run task suites in sandboxes (Docker, MCP servers, Chromium) and record every episode as a raw trajectory.

    A stdio MCP server runs in a fresh, hardened container per episode (no network, no capabilities, non-root,
    read-only root) unless its suite says `isolation: host`. trajforge does NOT isolate an HTTP MCP server (`url:`):
    it acts wherever it runs; the manifest records its host.

    Output: OUTPUT/<run-id>/segment-*.jsonl and _manifest.json. Interrupted (even with kill -9)? Run the same
    command again: finished episodes are kept and skipped. Exit code 1 if some episodes ended with an
    infrastructure error after all retries, or a task error (its setup failed).
    """
    from collectors.environments import Settings, build_environment
    from collectors.policies import POLICIES
    from collectors.runner import parse_shard, plan_episodes, run_collection
    from collectors.tasks import SuiteError, load_faults, load_suite
    from collectors.writer import RunWriter

    try:
        suites = [load_suite(s) for s in suite]
        shard_index = parse_shard(shard)
        policy_args = _policy_args(policy.value, explorer_steps, llm_url, llm_model)
        if faults:
            fault_config = load_faults(faults)
            suites = [dataclasses.replace(s, faults=fault_config) for s in suites]
        if simulate:
            url, _, model = simulate.partition("=")
            if not url or not model:
                raise ValueError("--simulate takes URL=MODEL, e.g. http://127.0.0.1:8000/v1=checkpoint-60")
            from sandboxes.terminal import SHELL_TOOL

            tools = [SHELL_TOOL]
            simulated = {
                "kind": "simulated",
                "url": url,
                "model": model,
                "instruction": simulation_instruction,
                "action_space": tools,
            }
            suites = [dataclasses.replace(s, environment={**simulated, "for": s.environment["kind"]}) for s in suites]
    except (SuiteError, ValueError) as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    if task:
        unknown = set(task) - {t.id for s in suites for t in s.tasks}
        if unknown:
            console.print(f"[red]unknown task ids: {', '.join(sorted(unknown))}[/]")
            raise typer.Exit(EXIT_USAGE)
        suites = [dataclasses.replace(s, tasks=tuple(t for t in s.tasks if t.id in task)) for s in suites]

    config = {
        "suites": [s.name for s in suites],
        "tasks": sorted(task),
        "policy": policy.value,
        "policy_args": policy_args,
        "repeats": repeats,
        "max_turns": max_turns,
        "command_timeout": command_timeout,
        "seed": seed,
        "shard": shard,
        "faults": {s.name: s.faults for s in suites if s.faults},
        "simulate": simulate,
    }
    mcp_policies = {s.name: mcp_policy(s.environment) for s in suites if s.environment["kind"] == "mcp"}
    if mcp_policies:
        config["mcp"] = mcp_policies
    on_host = sorted(name for name, p in mcp_policies.items() if p.get("isolation") == "host")
    if on_host:
        console.print(
            f"[yellow]warning: MCP suite(s) {', '.join(on_host)} run their server on this machine, not in a "
            "sandbox (`isolation: host`): every tool call acts with your user's files and network.[/]"
        )
    client = None
    isolated_mcp = any(p.get("isolation") == "container" for p in mcp_policies.values())
    if isolated_mcp or any(s.environment["kind"] == "terminal" for s in suites):  # Docker suites need the daemon
        from sandboxes.containers import reap_stale
        from sandboxes.image import ensure_base_image, image_digest

        client = _docker()
        reaped = reap_stale(client)
        if reaped:
            console.print(f"removed {reaped} containers left by an earlier run that died")
        image = image or ensure_base_image(client, log=console.print)
        config |= {"image": image, "image_digest": image_digest(client, image)}
    run_id = run_id or f"{'+'.join(config['suites'])}-{policy.value}-{config_hash(config)[:8]}" + (
        f"-shard{shard.replace('/', 'of')}" if shard != "0/1" else ""
    )
    run_dir = storage.join(output, run_id)
    settings = Settings(run_id=run_id, image=image, command_timeout=command_timeout, docker_client=client)
    if isolated_mcp:
        _prepare_mcp_packages(suites, settings)
    try:
        writer = RunWriter(run_dir, flush_every=flush_every)  # reads what an earlier run left there
    except storage.StorageError as exc:
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    episodes = plan_episodes(suites, repeats, shard_index, seed)
    result = run_collection(
        episodes,
        writer,
        make_env=lambda spec: build_environment(spec.environment, settings, spec.faults, spec.seed),
        make_policy=lambda: POLICIES[policy.value](**policy_args),
        run_id=run_id,
        concurrency=concurrency,
        retries=retries,
        max_turns=max_turns,
        progress=lambda items, total: progress(items, f"collecting {run_id}", total),
    )
    manifest = writer.write_manifest(config, len(episodes), {"seconds": round(result.seconds, 3)})
    counts = manifest.counts
    console.print(
        f"[bold]collect[/]: {result.ran} episodes run, {result.skipped} already done, {result.retries} retries "
        f"in {result.seconds:.1f}s -> {run_dir}"
    )
    outcomes = ", ".join(f"{k.split('.', 1)[1]} {v}" for k, v in counts.items() if k.startswith("outcome."))
    console.print(f"  holds {counts['written']} trajectories, {counts['turns']} turns ({outcomes})")
    table = Table("domain", "trajectories", "turns", box=None)
    for key, value in counts.items():
        if key.startswith("domain."):
            domain = key.split(".", 1)[1]
            table.add_row(domain, str(value), str(counts.get(f"turns.{domain}", 0)))
    console.print(table)
    raise typer.Exit(EXIT_REJECTED if result.infra_errors or result.task_errors else EXIT_OK)


def _policy_args(name: str, explorer_steps: int, llm_url: str | None, llm_model: str | None) -> dict:
    if name == "explorer":
        return {"steps": explorer_steps}
    if name == "llm":
        if not llm_url or not llm_model:
            raise ValueError("--policy llm needs --llm-url and --llm-model (or TRAJFORGE_LLM_URL/TRAJFORGE_LLM_MODEL)")
        return {"base_url": llm_url, "model": llm_model}
    return {}


def mcp_policy(environment: dict) -> dict:
    """What the manifest records of an MCP suite's isolation: stdio servers' isolation and network, HTTP servers'
    host (trajforge cannot isolate a remote server)."""
    from urllib.parse import urlsplit

    from collectors.environments import mcp_server

    server = mcp_server(environment)
    if server.url:
        return {"transport": "http", "isolation": "none (remote)", "url_host": urlsplit(server.url).hostname}
    return {"transport": "stdio", "isolation": server.isolation, "network": server.network}


def _prepare_mcp_packages(suites, settings) -> bool:
    """Install the isolated servers' npm/PyPI packages into the host cache before the first episode; False if one
    could not be installed (its episodes will then end as infra_error, saying why)."""
    from collectors.environments import mcp_isolation, mcp_server
    from sandboxes.base import InfraError
    from sandboxes.mcp_container import ServerContainer

    isolation = mcp_isolation(settings)
    ok = True
    for suite in suites:
        if suite.environment["kind"] != "mcp":
            continue
        server = mcp_server(suite.environment)
        if server.isolated:
            try:
                ServerContainer(server, isolation).prepare(list(server.args), log=console.print)
            except InfraError as exc:  # its episodes will fail as infra_error, with this reason; the others run
                console.print(f"[red]{suite.name}: {exc}[/]")
                ok = False
    return ok
