"""`trajforge plot` on real tiny training runs (masked vs --no-mask): a PNG, and an HTML page that Chromium renders;
bad input is a usage error naming the file."""

import shutil

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.training.test_stages import SMALL
from trajforge.pipelines.cli import app
from trajforge.training.metrics_log import read_metrics

runner = CliRunner()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, corpus_dir):
    root = tmp_path_factory.mktemp("plot-runs")
    for name, extra in (("cpt", []), ("cpt-nomask", ["--no-mask"])):
        args = ["train", "cpt", "--data", str(corpus_dir), "-o", str(root / name), "--max-steps", "4"]
        args += ["--eval-every", "2"]
        done = runner.invoke(app, [*args, *SMALL, *extra])
        assert done.exit_code == 0, done.output
    return root / "cpt", root / "cpt-nomask"


@pytest.mark.slow
def test_plot_draws_masked_and_unmasked_runs_as_png(two_runs, tmp_path):
    done = runner.invoke(app, ["plot", *map(str, two_runs), "-o", str(tmp_path / "curves.png")])
    assert done.exit_code == 0, done.output
    assert "plot: 2 run(s) (cpt, cpt-nomask) ->" in done.output
    with Image.open(tmp_path / "curves.png") as image:
        assert image.format == "PNG" and image.size[0] > 600
    default = runner.invoke(app, ["plot", str(two_runs[0])])  # default: curves.png beside the run folder
    assert default.exit_code == 0 and (two_runs[0].parent / "curves.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_plot_as_html_renders_in_chromium_with_a_row_per_run(two_runs, tmp_path):
    page_path = tmp_path / "curves.html"
    assert runner.invoke(app, ["plot", *map(str, two_runs), "-o", str(page_path)]).exit_code == 0

    from playwright.sync_api import sync_playwright

    from trajforge.sandboxes.browser import CHROMIUM_ARGS, chromium_path

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(page_path.as_uri())
        assert page.title() == "trajforge training runs"
        chart = page.locator("svg").first.bounding_box()
        assert chart["width"] > 400 and chart["height"] > 200 and chart["width"] <= 1200  # drawn, and fits the page
        rows = page.locator("tbody tr").all_inner_texts()
        browser.close()
    last = read_metrics(two_runs[1] / "metrics.jsonl")[-1]
    assert len(rows) == 2 and rows[1].split("\t")[:4] == ["cpt-nomask", str(two_runs[1]), "lm", "4"]
    assert f"{last['eval_loss']:.4g}" in rows[1]


def test_plot_of_a_folder_without_metrics_names_the_file(tmp_path):
    done = runner.invoke(app, ["plot", str(tmp_path), "-o", str(tmp_path / "c.png")])
    assert done.exit_code == 2 and f"{tmp_path / 'metrics.jsonl'}: no such file" in done.output.replace("\n", "")
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 2.0}\n')
    wrong = runner.invoke(app, ["plot", str(tmp_path), "-o", str(tmp_path / "c.jpg")])
    assert wrong.exit_code == 2 and "c.jpg: a chart is written as .png, .svg, .html" in wrong.output
    bad_eval = runner.invoke(app, ["plot", str(tmp_path), "--eval", str(tmp_path / "metrics.jsonl")])
    assert bad_eval.exit_code == 2 and "metrics.jsonl: not an eval JSON file" in bad_eval.output
