"""`trajforge report` writes a page that a real headless Chromium renders as expected."""

import shutil

import pytest
from typer.testing import CliRunner

from tests.builders import make_trajectory
from trajforge.pipelines.build_corpus.config import BuildConfig
from trajforge.pipelines.build_corpus.pipeline import build_corpus
from trajforge.pipelines.cli import app
from trajforge.schemas.sinks import write_segments


def echo_turns(topic: str) -> list[dict]:
    """Half the turns echo their action (masked by the paper's policy), half bring news (kept)."""
    turns = []
    for i in range(12):
        action = f"echo {topic} item {i} status"
        obs = (
            f"{topic} item {i} status" if i % 2 else f"{topic}: " + " ".join(f"fresh{topic}{i}x{k}" for k in range(20))
        )
        turns.append({"index": i, "action": {"kind": "shell", "content": action}, "observation": {"content": obs}})
    return turns


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_report_opens_in_chromium(tmp_path):
    raw = tmp_path / "raw"
    write_segments(
        [make_trajectory(turns=echo_turns(t), task_description=t) for t in ("apples", "rivers", "roads")], raw
    )
    (raw / "segment-bad.jsonl").write_text('{"schema_version": "7"}\n')
    build_corpus([str(raw)], tmp_path / "corpus", BuildConfig(masking_policy="information"), workers=1)
    run = (
        tmp_path / "runs" / "cpt"
    )  # a run's metrics as `trajforge train` logs them (tests/pipelines/commands/test_plot.py)
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text("".join(f'{{"step": {s}, "loss": {5 - s}}}\n' for s in (1, 2, 3)))
    result = CliRunner().invoke(app, ["report", str(tmp_path / "corpus"), "--samples", "2", "--runs", str(run)])
    assert result.exit_code == 0, result.output
    page_path = tmp_path / "corpus" / "report.html"

    from playwright.sync_api import sync_playwright

    from trajforge.sandboxes.browser import CHROMIUM_ARGS, chromium_path

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(page_path.as_uri())
        assert page.title() == "trajforge corpus report"
        assert page.locator("svg.histogram").count() == 6  # every statistic, the information ones included
        assert page.locator("section.sample").count() == 2
        assert page.locator(".turn.in-loss").count() > 0 and page.locator(".turn.masked").count() > 0
        assert page.locator("mark.loss").count() > 0
        assert "schema_version: unknown version" in page.locator("table").nth(2).inner_text()
        assert "counts reconcile" in page.locator("body > p").first.inner_text()
        assert page.locator("#training + .chart svg").count() == 1  # the runs' curves, inline
        assert page.locator("#training ~ table").first.locator("tbody tr").all_inner_texts()[0].startswith("cpt\t")
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_report_needs_a_built_corpus(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "run build-corpus first" in result.output


def test_report_of_runs_without_metrics_names_the_file(tmp_path, corpus_dir):
    result = CliRunner().invoke(
        app, ["report", str(corpus_dir), "-o", str(tmp_path / "r.html"), "--runs", str(tmp_path)]
    )
    assert result.exit_code == 2 and f"{tmp_path / 'metrics.jsonl'}: no such file" in result.output.replace("\n", "")
    assert not (tmp_path / "r.html").exists()
