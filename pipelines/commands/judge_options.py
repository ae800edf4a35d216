"""The judge a judging command names with its flags (flags.Judge ... flags.JudgeTimeout, declared once in
flags.py): curate-sft, eval, sim-check, judge-check and train rl take them in their own signatures and turn them
into a `JudgeSpec` with `judge_of`."""

from trajforge.evaluation.endpoint import KEY_ENV  # noqa: F401 - the default of --judge-key-env, for the commands
from trajforge.evaluation.factory import JudgeSpec
from trajforge.pipelines.commands import EXIT_USAGE

JUDGE_DEFAULTS = JudgeSpec()
# the parameters of the judge flags (flags.Judge ... flags.JudgeTimeout), in the order a signature lists them
OPTIONS = ("judge", "judge_url", "judge_model", "judge_key_env", "rubrics", "judge_timeout")


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


def _judge_spec_or_exit(values: dict) -> JudgeSpec:
    import typer

    from trajforge.pipelines.console import console

    try:
        return judge_spec(**values)
    except ValueError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
