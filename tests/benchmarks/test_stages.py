"""benchmarks/stages.py: a benchmark stopped part way and run again continues where it was, and never mixes two
runs' stages (issue 55: resumable stage by stage)."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import agent_learning  # noqa: E402 - the benchmarks folder is a script folder, not a package
from stages import FlagsChanged, Stages  # noqa: E402


class Runner:
    """Runs a command by writing the artifact the test names for it; `fail_at` stops the run there (a kill)."""

    def __init__(self, tmp_path: Path, fail_at: str | None = None):
        self.tmp_path, self.fail_at, self.commands = tmp_path, fail_at, []

    def __call__(self, *command: str) -> float:
        self.commands.append(command)
        if self.fail_at is not None and self.fail_at in command:
            raise RuntimeError("killed")
        (self.tmp_path / command[-1]).mkdir(parents=True, exist_ok=True)
        return 10.0 * len(self.commands)


def test_a_finished_stage_is_reused_and_one_whose_artifact_is_gone_runs_again(tmp_path):
    first = Runner(tmp_path)
    stages = Stages(tmp_path, {"steps": 4}, run=first)
    stages.run("a", tmp_path / "A", "x", "A")
    stages.run("b", tmp_path / "B", "x", "B")
    (tmp_path / "B").rmdir()
    again = Runner(tmp_path)
    resumed = Stages(tmp_path, {"steps": 4, "results": "elsewhere"}, run=again)
    assert resumed.run("a", tmp_path / "A", "x", "A") == 10.0  # its seconds from the first invocation
    resumed.run("b", tmp_path / "B", "x", "B")
    assert again.commands == [("x", "B")] and resumed.reused == ["a"]
    provenance = resumed.provenance()
    assert provenance["a"]["reused"] and not provenance["b"]["reused"] and len(provenance["a"]["commit"]) > 6


def test_a_stage_that_never_finished_runs_again(tmp_path):
    with pytest.raises(RuntimeError):
        Stages(tmp_path, {}, run=Runner(tmp_path, fail_at="A")).run("a", tmp_path / "A", "x", "A")
    (tmp_path / "A").mkdir()  # a partial artifact of the killed stage (a training run's first checkpoint folder)
    again = Runner(tmp_path)
    Stages(tmp_path, {}, run=again).run("a", tmp_path / "A", "x", "A")
    assert again.commands == [("x", "A")]


def test_a_folder_holding_a_run_with_other_flags_is_refused_naming_them(tmp_path):
    Stages(tmp_path, {"rl_steps": 16, "seeds": [0]}, run=Runner(tmp_path)).run("a", tmp_path / "A", "x", "A")
    with pytest.raises(FlagsChanged, match=r"--rl-steps 16 -> 24"):
        Stages(tmp_path, {"rl_steps": 24, "seeds": [0]})


def test_agent_rl_stopped_in_its_second_run_continues_without_redoing_its_start_or_first_run(tmp_path, monkeypatch):
    def evaluating(runner):
        def run(*command):
            if command[0] == "agent-eval":
                reports = [{"agent": "x", "overall": {"success_rate": 0.5, "scored": 10}}]
                Path(command[command.index("--report") + 1]).write_text(json.dumps({"agents": reports}))
                runner.commands.append(command)
                return 1.0
            run = tmp_path / f"rl-{command[command.index('--guide') + 1]}-seed-0"
            (run / "checkpoint-2").mkdir(parents=True, exist_ok=True)
            return runner(*command)

        return run

    args = agent_learning.argparse.Namespace(
        rl_steps=2, max_turns=4, concurrency=1, init="tiny", seeds=[0], guide="scripted", rl_lr=1e-4, group_size=2,
        tasks_per_step=2, rl_temperature=None,
    )  # fmt: skip
    rows = {"agent SFT from scratch": tmp_path / "sft"}
    (tmp_path / "sft").mkdir()
    monkeypatch.setattr(agent_learning, "validation_loss", lambda checkpoint: 1.0)
    killed = Runner(tmp_path, fail_at="none")  # the unguided arm, after the guided one finished
    with pytest.raises(RuntimeError):
        agent_learning.agent_rl(args, tmp_path, rows, Stages(tmp_path, vars(args), run=evaluating(killed)))
    resumed = Runner(tmp_path)
    _, runs, _ = agent_learning.agent_rl(args, tmp_path, rows, Stages(tmp_path, vars(args), run=evaluating(resumed)))
    assert [c[c.index("--guide") + 1] for c in resumed.commands] == ["none"]  # no agent-eval, no guided run
    assert len(runs) == 2


def test_a_real_command_records_its_wall_time_and_peak_memory(tmp_path):
    stages = Stages(tmp_path, {})
    stages.run("help", tmp_path / "never", "--help")
    stage = json.loads((tmp_path / "stages.json").read_text())["stages"]["help"]
    assert stage["seconds"] > 0 and 20 < stage["peak_mib"] < 4096  # a Python process importing the CLI
    assert "help" in stages.peak_memory() and "GiB" in stages.peak_memory()
