"""The metrics sink of every stage: metrics.jsonl, and with --report-to tensorboard the same numbers as event files
that TensorBoard's own reader reads back."""

import json

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from typer.testing import CliRunner

from tests.training.test_stages import SMALL
from trajforge.pipelines.cli import app
from trajforge.training import metrics_log
from trajforge.training.metrics_log import METRICS_NAME, TENSORBOARD_DIR, MetricsLog, read_metrics, scalars

runner = CliRunner()


def event_scalars(run_dir) -> dict[str, dict[int, float]]:
    """tag -> {step: value}, as TensorBoard reads the run's event files."""
    accumulator = EventAccumulator(str(run_dir / TENSORBOARD_DIR), size_guidance={"scalars": 0})
    accumulator.Reload()
    return {tag: {e.step: e.value for e in accumulator.Scalars(tag)} for tag in accumulator.Tags()["scalars"]}


def assert_same_as_jsonl(run_dir) -> None:
    lines = read_metrics(run_dir / METRICS_NAME)
    events = event_scalars(run_dir)
    expected = {(tag, line["step"]): value for line in lines for tag, value in scalars(line).items()}
    assert expected, "no numbers in metrics.jsonl"
    assert {(tag, step) for tag, steps in events.items() for step in steps} == set(expected)
    for (tag, step), value in expected.items():
        assert events[tag][step] == pytest.approx(value, rel=1e-6), (tag, step)  # event files hold float32


def test_scalars_flatten_nested_numbers_and_leave_out_text_and_missing_values():
    line = {"step": 3, "loss": 1.5, "outcomes": {"success": 2, "timeout": 1}, "warning": "x", "kl": None, "ok": True}
    assert scalars(line) == {"loss": 1.5, "outcomes/success": 2.0, "outcomes/timeout": 1.0, "ok": 1.0}


@pytest.mark.slow
def test_cpt_run_reports_to_tensorboard_the_numbers_of_metrics_jsonl(tmp_path, corpus_dir):
    run_dir = tmp_path / "cpt"
    args = ["train", "cpt", "--data", str(corpus_dir), "-o", str(run_dir), "--max-steps", "4", "--eval-every", "2"]
    args += SMALL
    done = runner.invoke(app, [*args, "--report-to", "tensorboard"])
    assert done.exit_code == 0, done.output
    lines = read_metrics(run_dir / METRICS_NAME)
    assert [line["step"] for line in lines] == [1, 2, 3, 4]
    assert {"loss", "lr", "grad_norm", "tokens_per_s", "eval_loss"} <= set(event_scalars(run_dir))
    assert_same_as_jsonl(run_dir)


def test_rl_and_agent_rl_lines_read_back_the_same(tmp_path):
    rl = {"step": 1, "reward": 0.25, "degenerate_groups": 0.5, "format_compliance": 0.75, "verifier_pass": None}
    agent = {"step": 2, "success": 0.5, "degenerate_groups": 1.0, "outcomes": {"success": 2}, "warning": "w"}
    with MetricsLog(tmp_path, "tensorboard") as log:
        log.write(rl)
        log.write(agent)
    assert [json.loads(line) for line in (tmp_path / METRICS_NAME).read_text().splitlines()] == [rl, agent]
    assert_same_as_jsonl(tmp_path)


def test_a_resumed_run_replaces_the_lines_after_its_checkpoint_in_both_reporters(tmp_path):
    with MetricsLog(tmp_path, "tensorboard") as stopped:
        for step in (1, 2, 3):
            stopped.write({"step": step, "loss": 10.0 + step})
    with MetricsLog(tmp_path, "tensorboard", resumed_from=1) as resumed:  # its checkpoint was at step 1
        for step in (2, 3, 4):
            resumed.write({"step": step, "loss": float(step)})
    assert read_metrics(tmp_path / METRICS_NAME) == [{"step": 1, "loss": 11.0}] + [
        {"step": s, "loss": float(s)} for s in (2, 3, 4)
    ]
    assert event_scalars(tmp_path)["loss"] == {1: 11.0, 2: 2.0, 3: 3.0, 4: 4.0}


def test_report_to_none_writes_no_event_files(tmp_path):
    with MetricsLog(tmp_path) as log:
        log.write({"step": 1, "loss": 2.0})
    assert read_metrics(tmp_path / METRICS_NAME) == [{"step": 1, "loss": 2.0}]
    assert not (tmp_path / TENSORBOARD_DIR).exists()


def test_bad_reporter_and_missing_tensorboard_are_usage_errors(tmp_path, corpus_dir, monkeypatch):
    args = ["train", "cpt", "--data", str(corpus_dir), "-o", str(tmp_path), "--report-to"]
    unknown = runner.invoke(app, [*args, "mlflow"])
    assert unknown.exit_code == 2 and "--report-to 'mlflow': choose none, tensorboard" in unknown.output
    monkeypatch.setattr(metrics_log.importlib.util, "find_spec", lambda name: None)
    missing = runner.invoke(app, [*args, "tensorboard"])
    assert missing.exit_code == 2 and "needs the tensorboard package" in missing.output
    assert not (tmp_path / METRICS_NAME).exists()
