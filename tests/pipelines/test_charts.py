"""Charts as files: PNG, SVG, and a self-contained HTML page; the grouped bars of eval's and judge-check's tables."""

import pytest
from matplotlib.figure import Figure
from PIL import Image

from trajforge.pipelines.charts import bar_chart, chart_beside, save_chart


def small_figure() -> Figure:
    figure = Figure(figsize=(3, 2))
    figure.add_subplot().plot([1, 2, 3], [3, 1, 2], label="a line")
    return figure


def test_a_chart_is_written_as_its_suffix_says(tmp_path):
    png = save_chart(small_figure(), tmp_path / "out" / "c.png", "title")
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size[0] > 200
    assert save_chart(small_figure(), tmp_path / "c.svg", "title").read_text().lstrip().startswith("<?xml")
    page = save_chart(small_figure(), tmp_path / "c.html", "a <title>", ([0, "run"], [["x", 1]])).read_text()
    assert page.startswith("<!doctype html>") and "<title>a &lt;title&gt;</title>" in page
    assert page.count("<svg") == 1 and "<?xml" not in page  # the SVG inline, without its own prolog
    assert not any(tag in page for tag in ("<script", "<link", "src=", 'href="http'))  # nothing fetched
    assert "<th>run</th>" in page and "<td>x</td><td>1</td>" in page


def test_an_unknown_chart_suffix_is_an_error_naming_the_file(tmp_path):
    with pytest.raises(ValueError, match=r"c\.jpg: a chart is written as \.png, \.svg, \.html"):
        save_chart(small_figure(), tmp_path / "c.jpg", "title")


def test_the_chart_of_a_json_table_goes_beside_it(tmp_path):
    assert chart_beside(tmp_path / "eval.json") == tmp_path / "eval.png"
    assert chart_beside(tmp_path / "eval.png") == tmp_path / "eval.chart.png"  # never over the JSON itself


def test_bars_are_one_per_series_and_category_and_a_missing_value_is_marked():
    figure = bar_chart("t", ["a", "b"], {"m1": [10.0, None], "m2": [30.0, 40.0]}, "score")
    axes = figure.axes[0]
    assert [p.get_height() for p in axes.patches] == [10.0, 30.0, 40.0]
    assert [t.get_text() for t in axes.texts] == ["10", "n/a", "30", "40"]  # each bar's value; no bar: n/a
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ["m1", "m2"]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["a", "b"]
