"""The documentation: a README that stays a front door, links that lead somewhere, nothing outside the repository."""

import fnmatch
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_LIMIT = 12_000  # bytes: "at most 12 KB" read the strict way
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# Spelled in pieces so that this file does not match itself.
OUTSIDE_POINTERS = ("../" + "shared", "DESIGN" + ".md")


def _without_code(markdown: str) -> str:
    return re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)


def _prose(markdown: str) -> str:
    """Markdown without its code: a link-like string inside a code block or span is not a link."""
    return re.sub(r"`[^`\n]*`", "", _without_code(markdown))


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    """Every heading's anchor; GitHub numbers a repeated one: x, x-1, x-2."""
    anchors, counts = set(), {}
    for heading in re.findall(r"^#{1,6} (.+)$", _without_code(path.read_text()), flags=re.M):
        base = _anchor(heading)
        anchors.add(f"{base}-{counts[base]}" if base in counts else base)
        counts[base] = counts.get(base, 0) + 1
    return anchors


def _relative_links(path: Path) -> list[str]:
    return [t for t in LINK.findall(_prose(path.read_text())) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def _ignored(relative: Path, patterns: list[str]) -> bool:
    """Whether a .gitignore line of the simple kinds this repository uses (`name/`, `/name/`, `*.ext/`) matches."""
    for pattern in patterns:
        top_only, name = pattern.startswith("/"), pattern.strip("/")
        if fnmatch.fnmatch(relative.name, name) and (not top_only or len(relative.parts) == 1):
            return True
    return False


def _repository_texts() -> dict[Path, str]:
    """Every file git would hold (what .gitignore does not exclude) that reads as UTF-8 text, by path."""
    lines = (ROOT / ".gitignore").read_text().splitlines()
    patterns = [line for line in lines if line.strip() and not line.startswith("#")] + [".git"]
    texts = {}
    for folder, subfolders, names in os.walk(ROOT):
        here = Path(folder)
        subfolders[:] = [s for s in subfolders if not _ignored((here / s).relative_to(ROOT), patterns)]
        for name in names:
            path = here / name
            if _ignored(path.relative_to(ROOT), patterns):
                continue
            try:
                texts[path] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
    return texts


def test_the_readme_is_a_front_door_of_at_most_12_kb():
    assert len(README.read_bytes()) <= README_LIMIT


def test_the_readme_shows_the_two_commands():
    text = README.read_text()
    assert "make demo" in text and "make test" in text


def test_every_relative_link_leads_to_a_file_and_heading_of_the_repository():
    broken = []
    for doc in [README, ARCHITECTURE, *PAGES]:
        for target in _relative_links(doc):
            file_part, _, anchor = target.partition("#")
            linked = (doc.parent / file_part).resolve() if file_part else doc
            if not linked.is_file() or ROOT not in linked.parents:
                broken.append(f"{doc.name}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{doc.name}: {target} (no such heading)")
    assert not broken


def test_the_readme_links_every_page_of_docs():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in _relative_links(README)}
    assert PAGES and set(PAGES) | {ARCHITECTURE} <= linked


def test_nothing_in_the_repository_points_outside_it():
    texts = _repository_texts()
    assert ROOT / "docs" / "design.md" in texts and ROOT / "schemas" / "records.py" in texts
    offenders = [
        f"{path.relative_to(ROOT)}: {pointer}"
        for path, text in texts.items()
        for pointer in OUTSIDE_POINTERS
        if pointer in text
    ]
    assert not offenders


def test_the_anchor_of_a_heading_is_the_one_github_gives_it():
    assert _anchor("Loss masking (paper §3.2, Table 3)") == "loss-masking-paper-32-table-3"
    assert _anchor("Training under `torchrun`") == "training-under-torchrun"


PAGE_WORD_LIMIT = 3_000  # words, counted as whitespace-separated pieces of the markdown
ARCHITECTURE_LINE_LIMIT = 150
RESULTS = ROOT / "results"
# A figure as a measurement reports it: a percentage, a ratio (1.54x), a rate, a duration, a gain in points.
FIGURE = re.compile(
    r"\d%|\d(?:\.\d+)?x\b|\d[\d,.]* ?(?:tokens/s|turns/s|episodes/min|episodes a minute|ms\b|min\b|minutes|hours)"
    r"|[+-]\d[\d.]* points"
)
# What says that a figure was measured rather than set (a target, a default, a rate of the config): the word, or
# the machine it was measured on.
MEASURED = re.compile(r"\bmeasured\b|\b\d+[- ]cores?\b", re.I)
GENERATED_PAGES = {"cli.md"}  # written by a tool from the code's flags: no measured figures to link


def _blocks(markdown: str) -> list[str]:
    """The paragraphs, list items and tables of a page's prose (fenced code left out), in order."""
    blocks, current = [], []
    for line in _without_code(markdown).splitlines():
        starts_item = re.match(r"\s*(?:[-*]|\d+\.) ", line) or line.startswith("#")
        if not line.strip() or starts_item:
            if current:
                blocks.append("\n".join(current))
            current = [line] if line.strip() else []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _is_table(block: str) -> bool:
    return all(line.startswith(("    ", "|")) for line in block.splitlines())


def _links_results(block: str) -> bool:
    return any("results/" in target for target in LINK.findall(block))


def test_every_docs_page_is_at_most_3000_words():
    long = {page.name: len(page.read_text().split()) for page in PAGES}
    assert {name: words for name, words in long.items() if words > PAGE_WORD_LIMIT} == {}


def test_the_architecture_is_at_most_150_lines():
    assert len(ARCHITECTURE.read_text().splitlines()) <= ARCHITECTURE_LINE_LIMIT


def test_every_link_into_results_leads_to_a_results_file():
    targets = [
        (doc.name, (doc.parent / t.partition("#")[0]).resolve())
        for doc in [README, ARCHITECTURE, *PAGES]
        for t in _relative_links(doc)
        if "results/" in t
    ]
    assert targets and [name for name, path in targets if RESULTS not in path.parents or not path.is_file()] == []


def test_a_measured_figure_in_the_docs_links_the_results_file_it_comes_from():
    """A paragraph or list item that reports a measured figure links its results/ file; a table of measured figures
    does, or the paragraph beside it does."""
    unlinked = []
    for page in [p for p in PAGES if p.name not in GENERATED_PAGES]:
        blocks = _blocks(page.read_text())
        for i, block in enumerate(blocks):
            if not FIGURE.search(block) or _links_results(block):
                continue
            if _is_table(block):
                neighbours = blocks[max(0, i - 1) : i] + blocks[i + 1 : i + 2]
                measured = any(MEASURED.search(b) for b in [block, *neighbours])
                if measured and not any(_links_results(n) for n in neighbours):
                    unlinked.append(f"{page.name}: {block.splitlines()[0][:80]}")
            elif MEASURED.search(block):
                unlinked.append(f"{page.name}: {block.splitlines()[0][:80]}")
    assert unlinked == []


def test_the_figure_check_finds_a_measured_figure_without_its_link():
    paragraph = "Measured on 2 cores: 61.5% after 48 steps."
    assert FIGURE.search(paragraph) and MEASURED.search(paragraph) and not _links_results(paragraph)
    assert _links_results(paragraph + " ([results](../results/x.md))")
    assert _is_table("    row   61.5%\n    row   60.2%") and not FIGURE.search("a target of 80 (none met)")
