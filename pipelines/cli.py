"""The `trajforge` command line: every command, with the one line `trajforge --help` lists it by (its own
`trajforge CMD --help` shows its whole docstring)."""

import sys

import typer
import typer.core
import typer.rich_utils

from trajforge.pipelines.commands.agent_eval import agent_eval_command
from trajforge.pipelines.commands.beam_command import BeamCommand
from trajforge.pipelines.commands.build_corpus import build_corpus_command
from trajforge.pipelines.commands.collect import collect_command
from trajforge.pipelines.commands.curate_sft import curate_sft_command
from trajforge.pipelines.commands.env_serve import env_serve_command
from trajforge.pipelines.commands.eval import eval_command
from trajforge.pipelines.commands.import_export import export_command, import_command
from trajforge.pipelines.commands.inspect import inspect_command
from trajforge.pipelines.commands.judge_check import judge_check_command
from trajforge.pipelines.commands.plot import plot_command
from trajforge.pipelines.commands.prepare_rl import prepare_rl_command
from trajforge.pipelines.commands.report import report_command
from trajforge.pipelines.commands.sandbox_image import sandbox_image_command
from trajforge.pipelines.commands.serve import serve_command
from trajforge.pipelines.commands.sim_check import sim_check_command
from trajforge.pipelines.commands.train import train_app
from trajforge.pipelines.console import pipe_width

# --help into a pipe: as wide as the console's tables (typer's own console would assume 80 and cut option names);
# TERMINAL_WIDTH, typer's own setting, still wins.
typer.rich_utils.MAX_WIDTH = typer.rich_utils.MAX_WIDTH or pipe_width(sys.stdout)


class ListedGroup(typer.core.TyperGroup):
    """The commands in COMMANDS' order (typer lists a command group, such as train, after all single commands)."""

    def list_commands(self, ctx) -> list[str]:
        return [name for name, _, _ in COMMANDS]


app = typer.Typer(
    name="trajforge",
    cls=ListedGroup,
    help="Agent trajectories -> training data for language world models: collect in real environments, "
    "build masked corpora with Beam, train CPT -> SFT -> RL, and train agents (agent SFT, agent RL).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

# name, function, and the one line `trajforge --help` lists it by (short enough for an 80-column terminal)
COMMANDS = (
    ("collect", collect_command, "Run task suites in sandboxes, record trajectories."),
    ("build-corpus", build_corpus_command, "Build the masked CPT corpus (Beam)."),
    ("curate-sft", curate_sft_command, "Curate SFT data: judged best of N candidates (Beam)."),
    ("prepare-rl", prepare_rl_command, "Prepare RL prompts with references and verifiers (Beam)."),
    ("eval", eval_command, "Score checkpoints or endpoints as the benchmark does."),
    ("agent-eval", agent_eval_command, "Measure agents' success on held-out tasks, for real."),
    ("sim-check", sim_check_command, "Measure a world model's fidelity against the real thing."),
    ("judge-check", judge_check_command, "Check a judge against adversarial candidates."),
    ("report", report_command, "Write an HTML page about a built corpus."),
    ("train", train_app, "Train world models (CPT, SFT, RL) and agents (SFT, RL)."),
    ("plot", plot_command, "Draw training runs' curves (and an eval table) as a picture."),
    ("serve", serve_command, "Serve a checkpoint as an OpenAI-compatible endpoint."),
    ("env-serve", env_serve_command, "Serve a suite as an OpenEnv environment."),
    ("inspect", inspect_command, "Summarise trajectory files, or query them with SQL."),
    ("import", import_command, "Import trajectories from a foreign format."),
    ("export", export_command, "Export trajforge records to another format."),
    ("sandbox-image", sandbox_image_command, "Build the sandbox image and MCP server cache."),
)
BEAM_JOBS = ("build-corpus", "curate-sft", "prepare-rl")  # flags after `--` go to Beam

for _name, _function, _line in COMMANDS:
    if isinstance(_function, typer.Typer):  # a command with subcommands: train's stages
        app.add_typer(_function, name=_name, short_help=_line)
    else:
        app.command(_name, short_help=_line, cls=BeamCommand if _name in BEAM_JOBS else None)(_function)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
