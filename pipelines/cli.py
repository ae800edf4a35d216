"""The `trajforge` command line."""

import typer

from trajforge.pipelines.commands import (
    build_corpus,
    collect,
    convert,
    curate_sft,
    evaluate,
    inspect,
    judge_check,
    prepare_rl,
    report,
    train,
)
from trajforge.pipelines.commands.beam_command import BeamCommand

app = typer.Typer(
    name="trajforge",
    help="Agent trajectories -> training data for language world models: collect in real environments, "
    "build masked corpora with Beam, train CPT -> SFT -> RL.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.command("collect")(collect.collect_command)
app.command("build-corpus", cls=BeamCommand)(build_corpus.build_corpus_command)
app.command("curate-sft", cls=BeamCommand)(curate_sft.curate_sft_command)
app.command("prepare-rl", cls=BeamCommand)(prepare_rl.prepare_rl_command)
app.command("eval")(evaluate.eval_command)
app.command("judge-check")(judge_check.judge_check_command)
app.command("report")(report.report_command)
app.command("train")(train.train_command)
app.command("serve")(train.serve_command)
app.command("inspect")(inspect.inspect_command)
app.command("import")(convert.import_command)
app.command("export")(convert.export_command)
app.command("sandbox-image")(collect.sandbox_image_command)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
