"""`trajforge collect` and MCP isolation: the opt-out is warned about once, the policy lands in the manifest."""

import json

from typer.testing import CliRunner

from tests.chat_server import chat_server
from trajforge.pipelines.cli import app
from trajforge.schemas.sources import read_records

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


def test_a_generated_suite_is_verified_then_collected_with_each_task_s_family(tmp_path):
    path = tmp_path / "kv-gen.yaml"
    path.write_text(
        "suite: kv-gen\ndomain: mcp\nenvironment: {kind: mcp, server: kvstore, isolation: host}\n"
        "generated:\n  - {family: kvstore, count: 3, seed: 5}\n"
    )
    args = ["collect", "--suite", str(path), "--verify-generated", "--output", str(tmp_path / "raw"), "--run-id", "r"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "verifying the generated tasks" in result.output
    records = [json.loads(line) for segment in (tmp_path / "raw" / "r").glob("segment-*.jsonl") for line in
               segment.read_text().splitlines()]  # fmt: skip
    assert len(records) == 3 and {r["outcome"]["status"] for r in records} == {"success"}
    assert {json.loads(r["metadata"])["family"] for r in records} == {"kvstore"}


def test_a_control_file_naming_an_unknown_fault_kind_stops_the_run_before_any_episode(tmp_path):
    control = tmp_path / "control.yaml"
    control.write_text("horizon: 4\nfaults:\n  pagination: {rate: 0.2}\n  flaky: {rate: 0.5}\n")
    args = ["collect", "--suite", "terminal", "--world-model", "http://127.0.0.1:9/v1=wm", "--control", str(control),
            "--output", str(tmp_path / "raw")]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert f"{control}: faults.flaky: unknown fault kind 'flaky'; known: intermittent_error" in result.output
    assert not (tmp_path / "raw").exists()
    unknown_preset = CliRunner().invoke(app, [*args[:-4], "--control", "flaky", "--output", str(tmp_path / "raw")])
    assert unknown_preset.exit_code == 2
    assert "unknown control preset 'flaky'; known: unreliable" in unknown_preset.output


def test_a_world_model_that_never_answers_with_an_observation_ends_the_run_with_every_episode_counted(tmp_path):
    reasoning_only = json.dumps({"choices": [{"message": {"role": "assistant", "content": "<think>maybe"}}]})
    with chat_server(lambda request: (200, reasoning_only.encode())) as (url, requests):
        args = ["collect", "--suite", "terminal", "--task", "count-lines", "-o", str(tmp_path), "--run-id", "r",
                "--world-model", f"{url}=wm", "--repeats", "2", "--retries", "1"]  # fmt: skip
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and "every episode run (2) ended as infra_error" in result.output
    assert len(requests) == 2 * 2 * 3  # two episodes, each tried twice, its first turn asked three times
    manifest = json.loads((tmp_path / "r" / "_manifest.json").read_text())
    assert manifest["counts"]["outcome.infra_error"] == 2 and manifest["counts"]["written"] == 2


def test_a_simulated_file_comparison_is_decided_by_the_predicted_file_and_no_rule_shows_the_value(tmp_path):
    """count-lines checks `test "$(cat answer.txt)" = 5`: a world model that answers every action with `exit code: 0`
    fails it, since the file it predicts for `cat answer.txt` decides; the check's own command (which holds 5) is
    never asked, and the flag that asked it (--simulate-file-check exit-code) is gone."""
    reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": "exit code: 0"}}]}).encode()
    with chat_server(lambda request: (200, reply)) as (url, requests):
        args = ["collect", "--suite", "terminal", "--task", "count-lines", "-o", str(tmp_path), "--run-id", "r",
                "--world-model", f"{url}=wm", "--simulate-prompt", "plain"]  # fmt: skip
        assert CliRunner().invoke(app, args).exit_code == 0
        gone = CliRunner().invoke(app, [*args, "--simulate-file-check", "exit-code"])
    (record,) = [r.record for r in read_records([str(tmp_path / "r")])]
    assert record.outcome.status == "failure"
    assert "predicted content of answer.txt" in json.loads(record.outcome.verifier)["decided_by"]
    assert requests[-1]["body"]["messages"][-1]["content"] == "cat answer.txt"
    assert gone.exit_code == 2 and "No such option" in gone.output
    manifest = json.loads((tmp_path / "r" / "_manifest.json").read_text())["config"]
    assert "simulate_file_check" not in manifest


def test_the_world_models_observation_length_is_capped_as_asked_and_recorded(tmp_path):
    reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": "exit code: 0"}}]}).encode()
    with chat_server(lambda request: (200, reply)) as (url, requests):
        args = ["collect", "--suite", "terminal", "--task", "count-lines", "-o", str(tmp_path), "--run-id", "capped",
                "--world-model", f"{url}=wm", "--simulate-prompt", "plain", "--simulate-max-tokens", "64"]  # fmt: skip
        assert CliRunner().invoke(app, args).exit_code == 0
        none_left = CliRunner().invoke(app, [*args[:-1], "0"])
    assert requests and {r["body"]["max_tokens"] for r in requests} == {64}
    manifest = json.loads((tmp_path / "capped" / "_manifest.json").read_text())["config"]
    assert manifest["simulate_max_tokens"] == 64
    assert none_left.exit_code == 2 and "--simulate-max-tokens" in none_left.output
