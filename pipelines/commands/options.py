"""Options that a command takes as a group (the trainer's; the judge's, for train), declared once as {name: (type,
default or typer option)} and added to the command's signature by `add_options`. Until train is converted to the
shared flags of flags.py (Annotated aliases in an explicit signature, as every other command is), it rewrites
signatures this way."""

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

