"""One meaning per flag (issue 53): every command's options, read from the app itself, give a flag name one help
text wherever it appears and a help text one name; retired names stay retired; docs/cli.md is what the app says."""

from pathlib import Path

import typer

from trajforge.pipelines.cli import app
from trajforge.pipelines.commands.cli_reference import REGENERATE, by_name, flags, reference

ROOT = Path(__file__).resolve().parents[2]
GROUP = typer.main.get_command(app)
RETIRED = {"--checkpoint", "-c", "--endpoint", "--simulate", "--llm-url", "--llm-model", "--llm-key-env",
           "--endpoint-key-env", "--agent-checkpoint", "--agent-endpoint", "--json", "--stage",
           "--simulate-file-check"}  # fmt: skip


def test_the_walk_reads_every_command_and_its_options():
    found = flags(GROUP)
    assert {f.command for f in found} >= {"collect", "eval", "export", "sandbox-image", "judge-check"}
    assert {"--output", "--agent", "--world-model", "--report"} <= {f.name for f in found}


def two_meanings(found) -> dict:
    """{name: {its help's start: the commands}} for each name with more than one help."""
    return {
        name: {text[:80]: commands for text, commands in helps.items()}
        for name, helps in by_name(found).items()
        if len(helps) > 1
    }


def two_names(found) -> dict:
    """{a help's start: its names} for each help that more than one name has."""
    names: dict[str, set[str]] = {}
    for flag in found:
        if flag.help:
            names.setdefault(flag.help, set()).add(flag.name)
    return {text[:80]: sorted(named) for text, named in names.items() if len(named) > 1}


def test_a_flag_name_has_one_meaning():
    found = two_meanings(flags(GROUP))
    assert not found, f"one name, two help texts (declare it once, in commands/flags.py): {found}"


def test_a_meaning_has_one_name():
    found = two_names(flags(GROUP))
    assert not found, f"one help text, two flag names: {found}"


def test_every_option_has_a_help():
    silent = [f"{f.command} {f.name}" for f in flags(GROUP) if not f.help]
    assert not silent


def test_retired_flag_names_stay_retired():
    back = {f"{command} {name}" for command, options in _all_names() for name in options if name in RETIRED}
    assert not back, f"retired flags are back: {sorted(back)}"


def _all_names():
    from trajforge.pipelines.commands.cli_reference import commands

    for name, command in commands(GROUP):
        yield name, [o for p in command.params if p.param_type_name == "option" for o in (*p.opts, *p.secondary_opts)]


def test_docs_cli_md_is_the_generated_reference():
    page = ROOT / "docs" / "cli.md"
    assert page.read_text() == reference(GROUP), f"docs/cli.md is stale: regenerate it with `{REGENERATE}`"


def test_the_checks_see_a_name_with_two_meanings_and_a_meaning_with_two_names():
    from trajforge.pipelines.commands.cli_reference import Flag

    found = [Flag("--seed", "Sampling seed.", "eval"), Flag("--seed", "The split's seed.", "build-corpus"),
             Flag("--out", "Where it goes.", "a"), Flag("--output", "Where it goes.", "b")]  # fmt: skip
    assert two_meanings(found) == {"--seed": {"Sampling seed.": ["eval"], "The split's seed.": ["build-corpus"]}}
    assert two_names(found) == {"Where it goes.": ["--out", "--output"]}
