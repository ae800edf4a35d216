"""Options that a command takes as a group (the judge's, the trainer's), declared once as {name: (type, typer
option)} and added to the command's signature by `add_options`, instead of being repeated in each signature; and
the words of the one option every endpoint a command talks to has, `--<endpoint>-key-env VAR`."""

import functools
import inspect
from collections.abc import Callable


def add_options(command, options: dict, into: str, gather: Callable[[dict], object]):
    """`command` with `options` as typer options; their values go through `gather`, and the command is called with
    its result as the argument `into`."""
    signature = inspect.signature(command)
    kept = [p for p in signature.parameters.values() if p.name != into]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)
        for name, (annotation, option) in options.items()
    ]

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        return command(*args, **{into: gather({name: kwargs.pop(name) for name in options})}, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*kept, *added])
    del wrapper.__wrapped__  # typer must read the new signature, not the command's own
    return wrapper


def key_env_help(whose: str) -> str:
    """The help of `--<endpoint>-key-env`: the variable is named on the command line, never the key itself."""
    return (
        f"The environment variable holding {whose} API key, sent as `Authorization: Bearer KEY` when it is set (a "
        "`trajforge serve` off loopback asks for one)."
    )
