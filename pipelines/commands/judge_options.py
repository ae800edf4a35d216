"""The judge options every judging command shares (curate-sft, train rl, eval, judge-check), added to a
command by one decorator: the command receives the judge they name as `judge_spec`."""

from pathlib import Path

import typer

from trajforge.evaluation.endpoint import KEY_ENV
from trajforge.evaluation.factory import JUDGES, JudgeSpec
from trajforge.pipelines.commands import EXIT_USAGE
from trajforge.pipelines.commands.options import add_options, key_env_help

OPTIONS = {
    "judge": (
        str,
        typer.Option(
            "embedded",
            "--judge",
            help=f"{JUDGES.describe(' or ')}.",
        ),
    ),
    "judge_url": (
        str | None,
        typer.Option(None, "--judge-url", envvar="TRAJFORGE_JUDGE_URL", help="The judge's base URL (…/v1)."),
    ),
    "judge_model": (
        str | None,
        typer.Option(None, "--judge-model", envvar="TRAJFORGE_JUDGE_MODEL", help="The judge's model id."),
    ),
    "judge_key_env": (
        str,
        typer.Option(KEY_ENV, "--judge-key-env", help=key_env_help("the judge's")),
    ),
    "rubrics": (
        Path | None,
        typer.Option(
            None,
            "--rubrics",
            help="A folder of {domain}/judge_system_prompt.txt files (e.g. AgentWorldBench's published judge "
            "prompts) that replace the bundled rubrics of those domains.",
        ),
    ),
    "judge_timeout": (
        float,
        typer.Option(120.0, "--judge-timeout", min=1.0, help="Seconds to wait for each judge answer (3 tries)."),
    ),
}


def judge_spec(
    judge: str, judge_url: str | None, judge_model: str | None, judge_key_env: str, rubrics: Path | None,
    judge_timeout: float,
) -> JudgeSpec:  # fmt: skip
    """The judge the options name; a bad combination raises ValueError naming the option to fix."""
    if rubrics is not None and not rubrics.is_dir():
        raise ValueError(f"--rubrics {rubrics}: not a folder")
    return JudgeSpec(judge, judge_url, judge_model, str(rubrics) if rubrics else None, judge_key_env, judge_timeout)


def with_judge_options(command):
    """Give a typer command the judge options; it is called with `judge_spec=JudgeSpec(...)` instead."""
    return add_options(command, OPTIONS, "judge_spec", _judge_spec_or_exit)


def _judge_spec_or_exit(values: dict) -> JudgeSpec:
    from trajforge.pipelines.console import console

    try:
        return judge_spec(**values)
    except ValueError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
