"""`trajforge env-serve`: a suite as an OpenEnv environment server (agents/openenv_env.py), real or in a world
model."""

from typing import Annotated

import typer
from rich.text import Text

from trajforge.collectors.simulation import WORLD_MODEL_KEY_ENV, simulation
from trajforge.pipelines.commands import EXIT_USAGE, flags
from trajforge.pipelines.commands.unused_flags import is_endpoint, refuse_unused, when
from trajforge.pipelines.console import console

Suite = Annotated[str, typer.Argument(help="A bundled suite name or a suite .yaml path.")]
MaxSessions = Annotated[int, typer.Option(min=1, help="Sessions at once, each in its own sandbox.")]
IdleTimeout = Annotated[
    float | None,
    typer.Option(min=1.0, help="Seconds without a message before a session and its sandbox are closed. Its next "
                 "message is then an error saying so; default: never."),
]  # fmt: skip


def env_serve_command(
    context: typer.Context,
    suite: Suite,
    task: flags.Tasks = [],  # noqa: B006 - typer copies list defaults
    world_model: flags.WorldModel = None,
    world_model_key_env: flags.WorldModelKeyEnv = WORLD_MODEL_KEY_ENV,
    simulate_prompt: flags.SimulatePrompt = None,
    simulate_max_tokens: flags.SimulateMaxTokens = None,
    max_turns: flags.MaxTurns = 30,
    command_timeout: flags.CommandTimeout = 10.0,
    image: flags.Image = None,
    port: flags.Port = 8000,
    max_sessions: MaxSessions = 8,
    idle_timeout: IdleTimeout = None,
) -> None:
    """Serve a suite as an OpenEnv environment: OpenEnv's clients (GenericEnvClient, the trainers built on it) reset,
    step and read the state of its tasks over WebSocket (/ws) or HTTP. Each session runs in a sandbox of its own;
    with --world-model, in the world model instead (the tasks grounded in their real starting states, as collect
    --world-model does). reset takes `task_id` (any task of the suite), or `seed`: the number of a task among the
    training tasks (those agent-rl trains on; among the --task tasks when given); step takes {"text": the
    agent's answer} or {"tool": NAME, "arguments": {...}}; the episode's reward is its check's verdict.

    Listens on 127.0.0.1 only: OpenEnv's protocol carries no key, and whoever reaches the port runs commands in
    the sandboxes (reach it from another machine through a tunnel, e.g. ssh -L). Needs the `envs` extra
    (openenv-core)."""
    refuse_unused(context, when(not is_endpoint(world_model), {"world_model_key_env": "only a --world-model "
                                                                "endpoint has a key"}))  # fmt: skip
    try:
        world = simulation(world_model, world_model_key_env, prompt=simulate_prompt, max_tokens=simulate_max_tokens)
        app = _app(suite, tuple(task), world, max_turns, command_timeout, image, max_sessions, idle_timeout)
    except (ValueError, ImportError) as exc:  # a bad suite, task or model, no Docker daemon, the extra missing
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    _serve(app, suite, world_model, port, max_sessions)


def _app(suite, tasks, world, max_turns, command_timeout, image, max_sessions, idle_timeout):
    try:
        from trajforge.agents.openenv_env import openenv_app
    except ImportError as exc:
        raise ImportError(f"env-serve needs openenv-core: pip install 'trajforge[envs]' ({exc})") from exc
    from trajforge.collectors.suite_env import open_suite

    opened = open_suite(suite, world, tasks=tasks, max_turns=max_turns, image=image, command_timeout=command_timeout,
                        run_id="env-serve", log=console.print)  # fmt: skip
    return openenv_app(opened, max_sessions, idle_timeout, part="all" if tasks else "train")


def _serve(app, suite: str, world_model: str | None, port: int, max_sessions: int) -> None:
    import uvicorn

    host = "127.0.0.1"
    where = f"in the world model {world_model}" if world_model else "in real sandboxes"
    console.print(f"serving {suite} {where} as an OpenEnv environment on http://{host}:{port} (ws://{host}:{port}/ws)"
                  f", at most {max_sessions} sessions")  # fmt: skip
    uvicorn.run(app, host=host, port=port, log_level="warning")
