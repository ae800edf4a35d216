"""What agent SFT reads: successful trajectories of training tasks only, everything else counted by why."""

import pytest

from tests.builders import make_trajectory
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.splits import SplitConfig, split_of
from trajforge.training.agent_data import successful_trajectories

STATUSES = ("success", "success", "failure", "agent_error", "timeout")


def episode(k: int, status: str):
    source = {"kind": "collected", "by": "scripted", "run_id": "r1", "origin": f"terminal/task-{k}#0"}
    return make_trajectory(2, task_description=f"Task {k}.", source=source, outcome={"status": status})


def test_only_successes_of_training_tasks_are_kept_and_the_rest_is_counted(tmp_path):
    records = [episode(k, STATUSES[k % len(STATUSES)]) for k in range(60)]
    write_segments(records, tmp_path / "run", per_file=16)
    (tmp_path / "run" / "broken.jsonl").write_text('{"trajectory_id": "x"}\n')
    sides = {r.trajectory_id: split_of(r.model_dump()) for r in records}
    held = {i for i, side in sides.items() if side in ("validation", "held_out")}  # neither part is trained on
    assert {"validation", "held_out"} <= set(sides.values())  # the default split holds some of these tasks out

    data = successful_trajectories(tmp_path / "run")

    kept = set(data.rows["trajectory_id"])
    assert kept == {r.trajectory_id for r in records if r.outcome.status == "success"} - held
    assert data.held_out == len(held) and data.invalid == 1 and data.read == 60
    training = [r for r in records if r.trajectory_id not in held]
    for status in ("failure", "agent_error", "timeout"):
        assert data.dropped[status] == sum(r.outcome.status == status for r in training)
    assert data.summary()["kept"] == len(kept) == data.read - data.held_out - sum(data.dropped.values())
    assert {o["status"] for o in data.rows["outcome"]} == {"success"}


def test_no_successful_training_trajectory_is_an_error_with_the_counts(tmp_path):
    write_segments([episode(k, "failure") for k in range(5)], tmp_path, per_file=5)
    with pytest.raises(ValueError, match=r"no successful trajectory .* 5 read, .*'failure': \d"):
        successful_trajectories(tmp_path)
    everything_held_out = SplitConfig(held_out=1.0)
    write_segments([episode(k, "success") for k in range(3)], tmp_path / "ok", per_file=5)
    with pytest.raises(ValueError, match="3 of held-out tasks"):
        successful_trajectories(tmp_path / "ok", everything_held_out)
