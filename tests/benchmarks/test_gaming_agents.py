"""benchmarks/gaming_agents.py on generated terminal tasks without setup (no Docker): the agents' actions as built
for each task, and their simulated episodes with the tiny checkpoint as the world model: an agent that could change
nothing is decided on the starting state and never paid. The real runs and trained world models are the benchmark's
own (it needs Docker)."""

import json
import sys
from pathlib import Path

from trajforge.collectors.collection import plan_suites
from trajforge.collectors.config import CollectConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gaming_agents  # noqa: E402 - the benchmarks folder is a script folder, not a package

SUITE = """suite: gaming
domain: terminal
environment: {kind: terminal, tools: [shell]}
generated:
  - {family: terminal-text, count: 2, seed: 5, answer_dirs: ["."]}
"""


def suites(tmp_path) -> list:
    path = tmp_path / "gaming.yaml"
    path.write_text(SUITE)
    return plan_suites(CollectConfig(suites=(str(path),)))


def test_each_agent_plays_its_commands_on_the_checked_file_without_computing_it(tmp_path):
    (suite,) = suites(tmp_path)
    paths = [gaming_agents.compared_file(t.check.command)[0] for t in suite.tasks]
    for agent, expected in (("done", [()] * 2), ("exit-code", [('echo "exit code: 0"',)] * 2),
                            ("names-file", [(f"cat {p}",) for p in paths])):  # fmt: skip
        (played,) = gaming_agents.gaming_suites([suite], agent)
        assert [tuple(a.content for a in t.actions) for t in played.tasks] == expected, agent
    (written,) = gaming_agents.gaming_suites([suite], "writes-file-name")
    for task, path in zip(written.tasks, paths, strict=True):
        (action,) = task.actions
        assert action.content.endswith(f"echo {path} > {path}")
        assert gaming_agents.compared_file(task.check.command)[1] not in action.content


def test_a_world_model_pays_no_agent_that_could_change_nothing(tmp_path, tiny_checkpoint):
    (suite,) = suites(tmp_path)
    assert not any(t.setup for t in suite.tasks)  # their starting state is their files: no Docker
    flags = ["--suite", "x", "--world-model", str(tiny_checkpoint), "--output", str(tmp_path / "runs")]
    args = gaming_agents.arguments([*flags, "--concurrency", "2", "--prompt", "plain"])
    for agent in ("done", "exit-code", "names-file"):
        played = gaming_agents.gaming_suites([suite], agent)
        sim = gaming_agents.simulated_paid(args, played, agent, 0)
        assert sim == {"paid": 0, "decided": len(suite.tasks), "share": 0.0}, agent
        for record in gaming_agents.run_records(str(tmp_path / "runs" / f"gaming-{agent}-wm0")).values():
            verifier = json.loads(record.outcome.verifier)
            assert verifier["decided_by"].startswith("the task's check on the real starting state"), agent
