from typer.testing import CliRunner

from tests.builders import make_trajectory
from trajforge.pipelines.cli import app
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.sinks import write_segments

runner = CliRunner()


def test_disable_accepts_every_filter_name_the_readme_lists(tmp_path):
    write_segments([make_trajectory(1)], tmp_path / "raw")
    out = tmp_path / "corpus"
    args = ["build-corpus", "-i", str(tmp_path / "raw"), "-o", str(out), "--workers", "1", "--held-out", "0"]
    result = runner.invoke(app, [*args, "--disable", "min_turns", "--disable", "gui_environment_failures"])
    assert result.exit_code == 0, result.output
    assert read_manifest(out).counts["written"] == 1


def test_disable_refuses_an_unknown_filter_by_name(tmp_path):
    result = runner.invoke(app, ["build-corpus", "-i", str(tmp_path), "--disable", "teleport"])
    assert result.exit_code == 2
    assert "unknown filter 'teleport'; known: gui_environment_failures, " in result.output
    assert "min_turns" in result.output


def test_an_unknown_input_format_is_refused_listing_the_known_ones(tmp_path):
    result = runner.invoke(app, ["build-corpus", "-i", str(tmp_path), "--input-format", "csv"])
    assert result.exit_code == 2
    assert "unknown --input-format 'csv'; known: trajforge, chat, atif, agentworldbench" in result.output
