"""`trajforge serve` refuses what it must not serve: an open bind without a key, a folder that is no checkpoint."""

from typer.testing import CliRunner

from trajforge.pipelines.cli import app


def test_serve_refuses_an_open_bind_without_a_key(tiny_checkpoint, monkeypatch):
    monkeypatch.delenv("TRAJFORGE_API_KEY", raising=False)
    result = CliRunner().invoke(app, ["serve", str(tiny_checkpoint), "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "refusing to serve on 0.0.0.0 without an API key" in result.output


def test_serve_refuses_a_folder_without_a_model_config(tmp_path):
    result = CliRunner().invoke(app, ["serve", str(tmp_path)])
    assert result.exit_code == 2 and "is not a checkpoint folder (no config.json)" in result.output
