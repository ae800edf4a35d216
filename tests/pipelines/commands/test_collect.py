"""`trajforge collect` and MCP isolation: the opt-out is warned about once, the policy lands in the manifest."""

import json

from typer.testing import CliRunner

from trajforge.pipelines.cli import app

SUITE = """
suite: {name}
domain: mcp
environment: {{kind: mcp, server: kvstore, isolation: host}}
tasks:
  - id: read
    instruction: Read the database host.
    actions:
      - {{tool: get, arguments: {{key: db/host}}}}
"""


def test_a_host_suite_is_warned_about_once_and_recorded(tmp_path):
    paths = []
    for name in ("kv-a", "kv-b"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(SUITE.format(name=name))
        paths += ["--suite", str(path)]
    result = CliRunner().invoke(app, ["collect", *paths, "--output", str(tmp_path / "raw"), "--run-id", "r"])
    assert result.exit_code == 0, result.output
    assert result.output.count("warning: MCP suite(s) kv-a, kv-b run their server on this machine") == 1
    manifest = json.loads((tmp_path / "raw" / "r" / "_manifest.json").read_text())
    policy = {"transport": "stdio", "isolation": "host", "network": "none"}
    assert manifest["config"]["mcp"] == {"kv-a": policy, "kv-b": policy}
