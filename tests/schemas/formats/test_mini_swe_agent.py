"""mini-swe-agent trajectories. `schemas/examples/mini_swe_agent.traj.json` was produced by the real tool:
mini-swe-agent 2.4.6 (PyPI) run by `test_a_real_mini_run_against_trajforge_serve_imports` below (the tiny checkpoint of
tests/corpus_fixtures.py behind `trajforge serve`, its text-based model, local environment, step limit 3), its output
copied as is. The version 1 file below is hand-written, in the layout mini-swe-agent 1.x's `save_traj` writes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.builders import EXAMPLES
from tests.serve_process import serving
from trajforge.schemas.formats import ImportOptions, mini_swe_agent
from trajforge.schemas.transfer import ImportJob, import_records

SAMPLE = EXAMPLES / "mini_swe_agent.traj.json"
MINI = Path(sys.executable).with_name("mini")  # the dev extra's mini-swe-agent, beside this interpreter
TASK = "Create a file hello.txt containing hi."
STEPS = 3


def read(path, **options):
    return list(mini_swe_agent.read(path, ImportOptions(**options)))


def kept(record) -> dict:
    return json.loads(record.metadata)["mini_swe_agent"]


def run_mini(url: str, folder: Path) -> Path:
    """`mini` on TASK against URL: its text-based model, whose first line of each answer is the command (a tiny
    checkpoint writes no fenced block), run in its local environment in FOLDER/work, STEPS steps."""
    work, output = folder / "work", folder / "hello.traj.json"
    work.mkdir()
    settings = {
        "agent": {"agent_class": "default", "step_limit": STEPS, "cost_limit": 0},
        "model": {
            "model_class": "litellm_textbased",
            "model_name": "openai/tiny",
            "action_regex": r"\A\s*(\S[^\n]*)",
            "cost_tracking": "ignore_errors",
            "model_kwargs": {"api_base": url, "api_key": "not-a-secret", "max_tokens": 24, "seed": 0},
        },
        "environment": {"environment_class": "local", "cwd": str(work), "timeout": 10},
    }
    (folder / "serve.yaml").write_text(yaml.safe_dump(settings))
    env = {
        **os.environ,
        "MSWEA_CONFIGURED": "true",  # no first-run questions
        "MSWEA_SILENT_STARTUP": "1",
        "MSWEA_GLOBAL_CONFIG_DIR": str(folder / "config"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm would download its price list
    }
    argv = [MINI, "-c", "mini_textbased.yaml", "-c", folder / "serve.yaml", "-t", TASK, "-o", output]
    done = subprocess.run(argv, env=env, cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    return output


@pytest.mark.slow
def test_a_real_mini_run_against_trajforge_serve_imports(tiny_checkpoint, tmp_path):
    if not MINI.exists():
        if os.environ.get("CI"):
            pytest.fail("CI installs the dev extra, mini-swe-agent included")
        pytest.skip("mini-swe-agent is not installed (pip install -e .[dev])")
    with serving(tiny_checkpoint) as url:
        output = run_mini(url, tmp_path)
    (result,) = read(output)
    assert result.ok, result.reasons()
    record = result.record
    assert TASK in record.task_description and record.domain == "swe"
    assert record.agent.name == "mini-swe-agent" and record.agent.model == "openai/tiny"
    assert kept(record)["exit_status"] == "LimitsExceeded"
    assert len(record.turns) + len(kept(record).get("interruptions", [])) == STEPS
    assert record.turns, "the model's answers gave no command"
    for turn in record.turns:  # each command with its own output, as the shell prints it again
        again = subprocess.run(
            turn.action.content, shell=True, cwd=tmp_path / "work", capture_output=True, text=True, errors="replace"
        )
        assert (turn.observation.content, turn.observation.exit_code) == (again.stdout + again.stderr, again.returncode)


def test_the_sample_a_real_run_wrote_imports_with_its_ids():
    (result,) = read(SAMPLE)
    assert result.ok, result.reasons()
    record = result.record
    assert record.task_description.startswith("Please solve this issue: Create a file hello.txt containing hi.")
    assert [t.action.kind for t in record.turns] == ["shell"] * 3
    raw = json.loads(SAMPLE.read_text())["messages"]
    outputs = [m["extra"] for m in raw if "raw_output" in m.get("extra", {})]
    assert [t.observation.content for t in record.turns] == [o["raw_output"] for o in outputs]  # not the template
    assert [t.observation.exit_code for t in record.turns] == [o["returncode"] for o in outputs] == [2, 2, 127]
    ids = kept(record)
    assert ids["instance_id"] == "mini_swe_agent"  # the file's name: a single run names no instance
    assert (ids["mini_version"], ids["exit_status"]) == ("2.4.6", "LimitsExceeded")
    assert ids["agent_system_prompt"].startswith("You are a helpful assistant")


def test_a_batch_runs_ids_and_version_1_text_actions(tmp_path):
    """A hand-written mini-swe-agent 1 file in a batch run's layout (RUN/INSTANCE/INSTANCE.traj.json)."""
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Please solve this issue: fix add()"},
        {"role": "assistant", "content": "THOUGHT: look.\n\n```bash\ncat calc.py\n```"},
        {
            "role": "user",
            "content": "<returncode>0</returncode>\n<output>\ndef add(a, b):\n    return a - b\n</output>",
        },
        {"role": "assistant", "content": "Two actions:\n```bash\nls\n```\n```bash\npwd\n```"},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks."},
        {"role": "assistant", "content": "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```"},
    ]
    value = {"info": {"exit_status": "Submitted", "submission": "diff"}, "messages": messages}
    path = tmp_path / "run-7" / "calc-1" / "calc-1.traj.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**value, "trajectory_format": "mini-swe-agent-1", "instance_id": "calc-1"}))
    (result,) = read(path)
    assert result.ok, result.reasons()
    (turn,) = result.record.turns
    assert (turn.action.content, turn.observation.content, turn.observation.exit_code) == (
        "cat calc.py",
        "def add(a, b):\n    return a - b\n",
        0,
    )
    ids = kept(result.record)
    assert (ids["instance_id"], ids["run"], ids["exit_status"]) == ("calc-1", "run-7", "Submitted")
    assert ids["unanswered_actions"] == ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"]


def test_what_cannot_be_read_is_rejected_with_its_field(tmp_path):
    sample = json.loads(SAMPLE.read_text())
    bad_action = json.loads(SAMPLE.read_text())
    bad_action["messages"][2]["extra"]["actions"] = [{"tool_call_id": "c1"}]
    files = {
        "v3.traj.json": {**sample, "trajectory_format": "mini-swe-agent-3"},
        "nomessages.traj.json": {"trajectory_format": "mini-swe-agent-1.1", "info": {}},
        "action.traj.json": bad_action,
        "errors-only.traj.json": {**sample, "messages": sample["messages"][:2]},
    }
    for name, value in files.items():
        (tmp_path / name).write_text(json.dumps(value))
    (tmp_path / "cut.traj.json").write_text(SAMPLE.read_text()[:500])
    reasons = {p.name: read(p)[0].reasons() for p in tmp_path.iterdir()}
    assert reasons["v3.traj.json"] == ["trajectory_format: expected mini-swe-agent-1.x, got 'mini-swe-agent-3'"]
    assert reasons["nomessages.traj.json"] == ["messages: missing"]
    assert reasons["action.traj.json"][0] == "messages[2].extra.actions[0].command: missing"
    assert reasons["errors-only.traj.json"] == ["messages: no command with its output: nothing to import"]
    assert reasons["cut.traj.json"][0].startswith("invalid JSON")


def test_import_counts_read_written_and_rejected_with_reasons(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "hello.traj.json").write_text(SAMPLE.read_text())
    (tmp_path / "in" / "broken.traj.json").write_text("{}")
    (tmp_path / "in" / "preds.json").write_text("{}")  # a batch run's other files are not trajectories
    manifest = import_records([tmp_path / "in"], ImportJob("mini-swe-agent", tmp_path / "raw"))
    assert manifest.counts == {"read": 2, "written": 1, "rejected": 1}
    assert manifest.rejection_reasons == {"trajectory_format: missing": 1, "messages: missing": 1}
