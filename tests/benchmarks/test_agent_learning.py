"""benchmarks/agent_learning.py's choice of the agent-RL start: made on the validation tasks (agent-eval --part
validation), never on the test tasks its final table reads, on synthetic agent-eval reports."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import agent_learning  # noqa: E402 - the benchmarks folder is a script folder, not a package

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

    monkeypatch.setattr(agent_learning, "trajforge", trajforge)
    rows = {"untrained": tmp_path / "u"}
    for i, name in enumerate(NAMES):
        (tmp_path / str(i)).mkdir()
        (tmp_path / str(i) / "checkpoint.json").write_text(json.dumps({"metrics": {"eval_loss": 1.0}}))
        rows[name] = tmp_path / str(i)
    args = agent_learning.argparse.Namespace(rl_steps=2, max_turns=4, concurrency=1, init="tiny")
    monkeypatch.setattr(agent_learning, "agent_rl_flags", lambda args: [])
    best, _, chosen_by = agent_learning.agent_rl(args, tmp_path, rows, {})
    assert best == NAMES[1] and chosen_by[NAMES[1]]["success_rate"] == 0.7
    evals = [c for c in commands if c[0] == "agent-eval"]
    assert [c[c.index("--part") + 1] for c in evals] == ["validation"]
    (evaluated,) = evals
    assert str(rows["untrained"]) not in evaluated and "scripted" not in evaluated  # the SFT rows alone
    rl = next(c for c in commands if c[:2] == ("train", "agent-rl"))
    assert rl[rl.index("--init") + 1] == str(rows[NAMES[1]])
