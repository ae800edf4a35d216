"""A flag given on the command line that what is being run does not use is an error naming it (exit 2), never
dropped in silence: a command says, for the mode it was given (a policy, a world model or none, the benchmark
lines instead of a corpus), which of its flags go unused and why."""

import typer
from rich.text import Text

from trajforge.pipelines.commands import EXIT_USAGE


def refuse_unused(context: typer.Context, unused: dict[str, str]) -> None:
    """Exit 2 naming every flag in `unused` (a parameter -> why this run does not use it) the user gave."""
    given = [name for name in unused if getattr(context.get_parameter_source(name), "name", "") == "COMMANDLINE"]
    if not given:
        return
    from trajforge.pipelines.console import console

    names = {p.name: max(p.opts, key=len) for p in context.command.params}
    for name in given:
        console.print(Text(f"{names[name]}: {unused[name]}", style="red"), soft_wrap=True)
    raise typer.Exit(EXIT_USAGE)


def when(condition: bool, flags: dict[str, str]) -> dict[str, str]:
    """`flags` when `condition` holds (they go unused then), else none."""
    return flags if condition else {}


def is_endpoint(text: str | None) -> bool:
    return bool(text) and text.startswith(("http://", "https://"))


def episode_modes(policies: list[str], agents: list[str]) -> dict[str, str]:
    """The flags of a collect run that the agents it runs leave unused: the explorer's steps, a model's sampling
    temperature and an endpoint's key variable."""
    return {
        **when("explorer" not in policies, {"explorer_steps": "only --policy explorer takes it"}),
        **when(not agents, {"temperature": "a model-free policy does not sample: give --agent"}),
        **when(not any(map(is_endpoint, agents)), {"agent_key_env": "only an --agent endpoint (URL=MODEL) has a key"}),
    }
