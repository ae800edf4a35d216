"""docs/cli.md, generated from the command line itself: every command (and subcommand) with its one line, then
every flag with the commands that take it and its help. tests/pipelines/test_flags.py reads the same walk to fail
on a flag name with two meanings, and regenerates the page to fail when the committed one differs:

    python -m trajforge.pipelines.commands.cli_reference > docs/cli.md
"""

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

REGENERATE = "python -m trajforge.pipelines.commands.cli_reference > docs/cli.md"


@dataclass(frozen=True)
class Flag:
    """One option of one command: its longest name (the one it is known by), its help, the command's path."""

    name: str
    help: str
    command: str


def commands(group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, object]]:
    """Every command under `group` (typer's click command of an app), a group's subcommands after it, in the order
    they are listed."""
    for name, command in getattr(group, "commands", {}).items():
        yield " ".join((*path, name)), command
        yield from commands(command, (*path, name))


def flags(group) -> list[Flag]:
    """Every option of every command under `group` (a group's own too), by its longest name."""
    return [
        Flag(max(p.opts, key=len), " ".join((p.help or "").split()), name)
        for name, command in commands(group)
        for p in command.params
        if p.param_type_name == "option"  # typer's own click: no isinstance of click.Option
    ]


def by_name(found: list[Flag]) -> dict[str, dict[str, list[str]]]:
    """{flag name: {help: the commands whose flag of that name has that help}}."""
    meanings: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for flag in found:
        meanings[flag.name][flag.help].append(flag.command)
    return meanings


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def first_sentence(text: str) -> str:
    """What a flag is, for the table; the rest of its help is its command's `--help`."""
    head, stop, _ = text.partition(". ")
    return head + "." if stop else text


def reference(group) -> str:
    """The markdown of docs/cli.md."""
    lines = [
        "# Every command and flag",
        "",
        "[README](../README.md) · generated from the command line by `pipelines/commands/cli_reference.py` "
        f"(`{REGENERATE}`; tests/pipelines/test_flags.py fails when it is stale). A flag means the same in every "
        "command that takes it; the table gives the first sentence of its help, `trajforge COMMAND --help` the rest "
        "and the defaults.",
        "",
        "## Commands",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {_cell(command.get_short_help_str(limit=200))} |" for name, command in commands(group)]
    lines += ["", "## Flags", "", "| flag | commands | meaning |", "|---|---|---|"]
    for name, helps in sorted(by_name(flags(group)).items()):
        for text, takers in helps.items():
            lines.append(f"| `{name}` | {', '.join(takers)} | {_cell(first_sentence(text))} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    import typer

    from trajforge.pipelines.cli import app

    print(reference(typer.main.get_command(app)), end="")


if __name__ == "__main__":
    main()
