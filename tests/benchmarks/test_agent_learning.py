"""benchmarks/agent_learning.py's choice of the agent-RL start: made on the validation tasks (agent-eval --part
validation), never on the test tasks its final table reads, on synthetic agent-eval reports."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import agent_learning  # noqa: E402 - the benchmarks folder is a script folder, not a package
from stages import Stages  # noqa: E402

NAMES = ["agent SFT from scratch", "agent SFT from world model", "agent SFT --role both"]


def report(rate: float | None, scored: int = 20) -> dict:
    return {"agent": "x", "overall": {"success_rate": rate, "scored": scored}}


def test_the_rl_start_is_the_best_validation_row_a_tie_broken_by_the_lower_loss():
    losses = {NAMES[0]: 0.9, NAMES[1]: 0.5, NAMES[2]: 0.7}
    assert agent_learning.choose_rl_start(NAMES, [report(0.4), report(0.3), report(0.6)], losses) == NAMES[2]
    assert agent_learning.choose_rl_start(NAMES, [report(0.6), report(0.6), report(0.6)], losses) == NAMES[1]
    assert agent_learning.choose_rl_start(NAMES, [report(None), report(0.1), report(None)], losses) == NAMES[1]


def test_agent_rl_starts_from_the_row_the_validation_tasks_chose_and_the_test_tasks_are_not_read(tmp_path, monkeypatch):
    """Validation favours the world-model row; the test part (which this step must not read) would favour another."""
    rates = {"validation": [0.2, 0.7, 0.5], "test": [0.9, 0.1, 0.1]}
    commands = []

    def trajforge(*command):
        commands.append(command)
        if command[0] == "agent-eval":
            part = command[command.index("--part") + 1]
            reports = [report(r) for r in rates[part]]
            Path(command[command.index("--report") + 1]).write_text(json.dumps({"agents": reports}))
        return 1.0

    rows = {"untrained": tmp_path / "u"}
    for i, name in enumerate(NAMES):
        (tmp_path / str(i)).mkdir()
        (tmp_path / str(i) / "checkpoint.json").write_text(json.dumps({"metrics": {"eval_loss": 1.0}}))
        rows[name] = tmp_path / str(i)
    args = agent_learning.argparse.Namespace(
        rl_steps=2, max_turns=4, concurrency=1, init="tiny", seeds=[0], guide="none"
    )
    monkeypatch.setattr(agent_learning, "agent_rl_flags", lambda args, guide, seed: [])
    best, _, chosen_by = agent_learning.agent_rl(args, tmp_path, rows, Stages(tmp_path, {}, run=trajforge))
    assert best == NAMES[1] and chosen_by[NAMES[1]]["success_rate"] == 0.7
    evals = [c for c in commands if c[0] == "agent-eval"]
    assert [c[c.index("--part") + 1] for c in evals] == ["validation"]
    (evaluated,) = evals
    assert str(rows["untrained"]) not in evaluated and "scripted" not in evaluated  # the SFT rows alone
    rl = next(c for c in commands if c[:2] == ("train", "agent-rl"))
    assert rl[rl.index("--init") + 1] == str(rows[NAMES[1]])


def test_with_a_guide_every_seed_runs_guided_and_unguided_from_the_same_start(tmp_path, monkeypatch):
    commands = []
    stages = Stages(tmp_path, {}, run=lambda *command: commands.append(command) or 1.0)
    monkeypatch.setattr(agent_learning, "evaluate", lambda *a, **k: [report(0.5)])
    monkeypatch.setattr(agent_learning, "validation_loss", lambda checkpoint: 1.0)
    args = agent_learning.argparse.Namespace(
        rl_steps=2, max_turns=4, concurrency=1, init="tiny", seeds=[0, 1], guide="scripted", rl_lr=1e-4,
        group_size=2, tasks_per_step=2, rl_temperature=None,
    )  # fmt: skip
    _, runs, _ = agent_learning.agent_rl(args, tmp_path, {NAMES[0]: tmp_path / "sft"}, stages)
    assert len(runs) == 4
    rl = [c for c in commands if c[:2] == ("train", "agent-rl")]
    arms = {(c[c.index("--guide") + 1], c[c.index("--seed") + 1]) for c in rl}
    assert arms == {("scripted", "0"), ("none", "0"), ("scripted", "1"), ("none", "1")}
    assert {c[c.index("--init") + 1] for c in rl} == {str(tmp_path / "sft")}


def row(outcomes: list[int], rate: float | None = None) -> dict:
    tasks = {f"t{i}": [o] for i, o in enumerate(outcomes)}
    return {"outcomes": tasks, "success_rate": sum(outcomes) / len(outcomes) if rate is None else rate}


def test_the_verdict_is_the_paired_difference_not_two_intervals():
    """Issue 54: the verdict read two Wilson intervals side by side. 40 test tasks: the world-model row solves
    every task the scratch row solves and 8 more; unpaired, their Wilson intervals ([31%, 60%], [50%, 78%]) overlap."""
    scratch, world = [1] * 18 + [0] * 22, [1] * 26 + [0] * 14
    rows = {"agent SFT from scratch": row(scratch), "agent SFT from world model": row(world)}
    assert "helped the agent: +20.0 points" in agent_learning.verdict(rows)
    rows["agent SFT from world model"] = row([0] * 2 + [1] * 16 + [0] * 2 + [1] * 2 + [0] * 18)
    assert "cannot tell" in agent_learning.verdict(rows)


def test_agent_rl_is_read_over_its_seeds_and_guided_against_unguided_paired():
    args = agent_learning.argparse.Namespace(seeds=[0, 1, 2], guide="scripted")
    start = [1] * 10 + [0] * 30
    by_name = {"sft": row(start)}
    for seed in args.seeds:  # the guided arm solves 12 more tasks at every seed, the unguided one 0 to 2 more
        by_name[agent_learning.rl_label("scripted", seed)] = row([1] * 22 + [0] * 18)
        by_name[agent_learning.rl_label("none", seed)] = row([1] * (10 + seed) + [0] * (30 - seed))
    arms = agent_learning.rl_summary(args, by_name, "sft")
    assert arms["scripted"]["success_mean"] == pytest.approx(22 / 40) and arms["scripted"]["success_sd"] == 0
    assert arms["none"]["success_min"] == 10 / 40 and arms["none"]["success_max"] == 12 / 40
    assert arms["scripted"]["gain_over_start"]["difference"] == pytest.approx(12 / 40)
    assert arms["scripted"]["reading"].startswith("agent RL raised success")
    assert arms["none"]["reading"].startswith("cannot tell")
    assert arms["guided_minus_unguided"]["reading"].startswith("the guide helped")
    assert arms["guided_minus_unguided"]["difference"]["n"] == 3 * 40  # 40 tasks x 3 seeds, a task one cluster


def test_the_held_out_family_rows_read_a_family_no_stage_trained_on_in_its_own_suite(tmp_path):
    """Issue 54 item 6: beside the in-family test rows, every row on the tasks of another family, all of them in the
    test part; agent RL is read there against its start too."""
    commands = []

    def trajforge(*command):
        commands.append(command)
        agents = [c for i, c in enumerate(command) if command[i - 1] == "--agent"]
        overall = {"success_rate": 0.5, "scored": 2, "successes": 1, "interval": None, "mean_turns": 1.0,
                   "unparseable_rate": 0.0}  # fmt: skip
        reports = [{"agent": a, "model_free": False, "overall": overall, "outcomes": {"t": [1], "u": [0]}}
                   for a in ["scripted", *agents]]  # fmt: skip
        Path(command[command.index("--report") + 1]).write_text(json.dumps({"agents": reports}))
        return 1.0

    args = agent_learning.argparse.Namespace(held_out_family_tasks=30, task_seed=3, max_turns=4, concurrency=1,
                                             seeds=[0], guide="none")  # fmt: skip
    agents = {NAMES[0]: tmp_path / "sft", agent_learning.rl_label("none", 0): tmp_path / "rl"}
    found = agent_learning.held_out_family(args, tmp_path, agents, Stages(tmp_path, {}, run=trajforge), NAMES[0])
    (command,) = commands
    suite = Path(command[command.index("--suite") + 1])
    assert "family: terminal-files, count: 30, seed: 3" in suite.read_text()
    assert "terminal-text" not in suite.read_text()
    assert command[command.index("--held-out-family") + 1] == "terminal-files"
    assert command[command.index("--part") + 1] == "test" and "scripted" in command
    assert [r["row"] for r in found["rows"]][1:] == list(agents)
    assert found["rl"]["none"]["gain_over_start"]["difference"] == 0.0
    args.held_out_family_tasks = 0
    assert agent_learning.held_out_family(args, tmp_path, agents, Stages(tmp_path, {}, run=trajforge), NAMES[0]) is None
