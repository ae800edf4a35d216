"""Charts as files: matplotlib figures (its object API on the Agg canvas: no display, no global pyplot state), saved as
PNG or SVG, or as one self-contained HTML page with the chart inline as SVG (no script, nothing fetched). Also the
one grouped bar chart that eval's and judge-check's tables become."""

import io
import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from matplotlib.figure import Figure

from trajforge.pipelines.report import html_table

CHART_SUFFIXES = (".png", ".svg", ".html")
DPI = 110
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
PAGE_STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1200px;color:#1d2330}"
    "h1{font-weight:600} svg{max-width:100%;height:auto} table{border-collapse:collapse;margin:1rem 0}"
    "td,th{padding:.2rem .6rem;border-bottom:1px solid #e3e6ec;text-align:left}"
)


def color(i: int) -> str:
    return COLORS[i % len(COLORS)]


def svg_of(figure: Figure) -> str:
    """The figure as an <svg> element to put inside HTML (text drawn as paths: no font needed to view it)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})  # the same chart, same text
    return re.sub(r"^.*?(?=<svg)", "", buffer.getvalue(), count=1, flags=re.S)


def html_page(title: str, figure: Figure, table: tuple[Sequence[str], Sequence[Sequence]] | None = None) -> str:
    """One page: the title, the chart inline as SVG, and a table under it when given (headers, rows)."""
    body = html_table(*table) if table else ""
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{PAGE_STYLE}</style></head><body><h1>{escape(title)}</h1>{svg_of(figure)}{body}</body></html>"
    )


def check_chart_path(path: Path) -> Path:
    path = Path(path)
    if path.suffix not in CHART_SUFFIXES:
        raise ValueError(f"{path}: a chart is written as {', '.join(CHART_SUFFIXES)}")
    return path


def save_chart(figure: Figure, path: Path, title: str, table=None) -> Path:
    """Write the figure as `path`'s suffix says (.png, .svg, or .html: a page around the inline SVG, with `table`
    (headers, rows) under it)."""
    path = check_chart_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".html":
        path.write_text(html_page(title, figure, table))
    else:
        figure.savefig(path, format=path.suffix[1:], dpi=DPI, bbox_inches="tight")
    return path


def chart_beside(json_path: Path) -> Path:
    """Where a command that writes a table as JSON puts its chart: the same name, as .png."""
    json_path = Path(json_path)
    return json_path.with_suffix(".chart.png" if json_path.suffix == ".png" else ".png")


def draw_bars(axes, categories: Sequence[str], series: Mapping[str, Sequence[float | None]], ylabel: str) -> None:
    """One group per category, one bar per series (a missing value: no bar, "n/a" at its foot)."""
    width = 0.8 / max(1, len(series))
    vertical = len(series) > 3  # labels of narrow bars would overlap side by side
    for i, (name, values) in enumerate(series.items()):
        for j, value in enumerate(values):
            x = j - 0.4 + width * (i + 0.5)
            if value is None:
                axes.text(x, 0, "n/a", ha="center", va="bottom", fontsize=7, rotation=90, color="#6c757d")
                continue
            bar = axes.bar(x, value, width * 0.92, color=color(i), label=name if j == _first(values) else None)
            axes.bar_label(bar, fmt="%.0f", fontsize=7, padding=1, rotation=90 if vertical else 0)
    axes.set_xticks(range(len(categories)), categories, rotation=20, ha="right")
    axes.set_ylabel(ylabel)
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def _first(values: Sequence[float | None]) -> int:
    """The index of the first value present (where the series gets its legend entry)."""
    return next((j for j, v in enumerate(values) if v is not None), -1)


def bar_chart(
    title: str, categories: Sequence[str], series: Mapping[str, Sequence[float | None]], ylabel: str
) -> Figure:
    figure = Figure(figsize=(max(7.0, 1.5 + 0.5 * len(categories) * max(1, len(series)) ** 0.5), 4.2))
    axes = figure.add_subplot()
    draw_bars(axes, categories, series, ylabel)
    axes.set_title(title, fontsize=11)
    return figure
