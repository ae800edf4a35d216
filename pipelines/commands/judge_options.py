"""The judge a judging command names with its flags (flags.Judge ... flags.JudgeTimeout, declared once in
flags.py): curate-sft, eval, sim-check and judge-check take them in their own signatures and turn them into a
`JudgeSpec` with `judge_of`; `with_judge_options` adds the same flags to a command that receives `judge_spec`."""

from trajforge.evaluation.endpoint import KEY_ENV
from trajforge.evaluation.factory import JudgeSpec
from trajforge.pipelines.commands import EXIT_USAGE, flags
from trajforge.pipelines.commands.options import add_options

JUDGE_DEFAULTS = JudgeSpec()
# {parameter: (its flag, its default)}, in the order a signature lists them
OPTIONS = {
    "judge": (flags.Judge, JUDGE_DEFAULTS.kind),
    "judge_url": (flags.JudgeUrl, None),
    "judge_model": (flags.JudgeModel, None),
    "judge_key_env": (flags.JudgeKeyEnv, KEY_ENV),
    "rubrics": (flags.Rubrics, None),
    "judge_timeout": (flags.JudgeTimeout, JUDGE_DEFAULTS.timeout),
}


def judge_spec(
    judge: str, judge_url: str | None, judge_model: str | None, judge_key_env: str, rubrics, judge_timeout: float,
) -> JudgeSpec:  # fmt: skip
    """The judge the options name; a bad combination raises ValueError naming the option to fix."""
    if rubrics is not None and not rubrics.is_dir():
        raise ValueError(f"--rubrics {rubrics}: not a folder")
    return JudgeSpec(judge, judge_url, judge_model, str(rubrics) if rubrics else None, judge_key_env, judge_timeout)


def judge_of(options: dict) -> JudgeSpec:
    """The judge named by the judge flags among a command's `options` (its locals), which lose them; a bad
    combination is one red line and exit code 2."""
    return _judge_spec_or_exit({name: options.pop(name) for name in OPTIONS})


def with_judge_options(command):
    """Give a typer command the judge options; it is called with `judge_spec=JudgeSpec(...)` instead."""
    return add_options(command, OPTIONS, "judge_spec", _judge_spec_or_exit)


def _judge_spec_or_exit(values: dict) -> JudgeSpec:
    import typer

    from trajforge.pipelines.console import console

    try:
        return judge_spec(**values)
    except ValueError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
