"""Training curves from run folders: which panels, which points, and clear errors for folders without metrics."""

import json

import pytest

from trajforge.pipelines.run_curves import (
    RunMetricsError,
    curves_figure,
    load_runs,
    read_run_lines,
    run_folder,
    run_table,
    smoothed,
)


def write_run(folder, lines: list[dict]):
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def lm_lines(n: int, start: float) -> list[dict]:
    return [{"step": s, "loss": start - 0.1 * s, **({"eval_loss": start - 0.05 * s} if s % 2 == 0 else {})}
            for s in range(1, n + 1)]  # fmt: skip


def rl_lines() -> list[dict]:
    return [{"step": s, "reward": 5.0 + s, "format_compliance": 0.5, "degenerate_groups": 0.25, "loss": 0.01,
             "verifier_pass": None} for s in (1, 2, 3)]  # fmt: skip


def lines_of(axes) -> dict[str, tuple[list, list]]:
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in axes.lines}


def test_masked_and_unmasked_runs_share_the_loss_panel_and_rl_gets_its_own(tmp_path):
    masked = write_run(tmp_path / "cpt", lm_lines(4, 5.0))
    unmasked = write_run(tmp_path / "cpt-nomask", lm_lines(4, 6.0))
    rl = write_run(tmp_path / "rl", rl_lines())
    figure = curves_figure(load_runs([masked, unmasked, rl]))
    loss, reward, shares = figure.axes
    assert lines_of(loss)["cpt loss"] == ([1, 2, 3, 4], [4.9, 4.8, 4.7, 4.6])
    assert lines_of(loss)["cpt-nomask held-out"] == ([2, 4], [5.9, 5.8])
    assert set(lines_of(loss)) == {"cpt loss", "cpt held-out", "cpt-nomask loss", "cpt-nomask held-out"}
    assert lines_of(reward) == {"rl reward": ([1, 2, 3], [6.0, 7.0, 8.0])}
    assert lines_of(shares)["rl format"][1] == [0.5] * 3 and lines_of(shares)["rl degenerate"][1] == [0.25] * 3


def test_agent_rl_success_and_an_eval_table_under_the_curves(tmp_path):
    agent = [{"step": 1, "success": 0.25, "degenerate_groups": 1.0, "loss": None, "outcomes": {"failure": 3}}]
    report = {"model": "a/checkpoint-1", "judge": "embedded", "pooled": {"overall": 40.0}, "format_compliance": 1.0}
    figure = curves_figure(load_runs([write_run(tmp_path / "agent-rl", agent)]), [report])
    panel, bars = figure.axes
    assert lines_of(panel) == {"agent-rl success": ([1], [0.25]), "agent-rl degenerate": ([1], [1.0])}
    assert "world-model evaluation" in bars.get_title() and max(p.get_height() for p in bars.patches) == 100.0


def test_a_loss_of_many_steps_is_drawn_faint_with_its_moving_average(tmp_path):
    figure = curves_figure(load_runs([write_run(tmp_path / "sft", lm_lines(40, 9.0))]))
    raw, average = figure.axes[0].lines[:2]
    assert raw.get_alpha() == 0.25 and average.get_label() == "sft loss"
    assert list(average.get_ydata()) == smoothed(list(raw.get_ydata()), 5)
    assert smoothed([1.0, 3.0, 5.0, 7.0], 2) == [1.0, 2.0, 4.0, 6.0]


def test_runs_with_the_same_name_are_told_apart_and_a_checkpoint_means_its_run(tmp_path):
    a = write_run(tmp_path / "a" / "cpt", lm_lines(2, 3.0))
    b = write_run(tmp_path / "b" / "cpt", lm_lines(2, 3.0))
    (a / "checkpoint-2").mkdir()
    assert run_folder(a / "checkpoint-2") == a
    runs = load_runs([a / "checkpoint-2", b])
    assert [r.label for r in runs] == ["a/cpt", "b/cpt"]
    headers, rows = run_table(runs)
    assert rows[0][:4] == ["a/cpt", str(a), "lm", 2] and rows[0][headers.index("last eval_loss")] == "2.9"


def test_a_folder_without_metrics_is_an_error_naming_the_file(tmp_path):
    with pytest.raises(RunMetricsError, match=rf"{tmp_path}/metrics.jsonl: no such file: .* run folder"):
        read_run_lines(tmp_path)
    (tmp_path / "metrics.jsonl").write_text("\n")
    with pytest.raises(RunMetricsError, match=r"metrics.jsonl: empty: the run has not logged a step yet"):
        read_run_lines(tmp_path)
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 2}\n{"step": 2, "loss"\n')
    with pytest.raises(RunMetricsError, match=r"metrics.jsonl:2: not JSON"):
        read_run_lines(tmp_path)
    (tmp_path / "metrics.jsonl").write_text('{"loss": 2}\n')
    with pytest.raises(RunMetricsError, match=r"metrics.jsonl:1: a metrics line is a JSON object with an integer step"):
        read_run_lines(tmp_path)
