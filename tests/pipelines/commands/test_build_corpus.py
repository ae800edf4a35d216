import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.builders import EXAMPLES, dataset_chat_rows, make_trajectory, write_dataset
from trajforge.curation.filters import FILTERS
from trajforge.pipelines.cli import app
from trajforge.schemas.dataset import load_cpt
from trajforge.schemas.formats import FORMATS, ImportOptions, get_format
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.sinks import write_segments

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[3]
BACKTICKED_NAME = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)*)`")  # `min_turns`; not `--min-turns`, `git add`
BLOCK_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:\d+\.|[-*])[ \t])")  # a blank line, or the next list item


def documented_filter_names() -> set[str]:
    """The filter names the docs list for `--disable`: the backticked names in each paragraph or list item of
    README.md and docs/*.md that mentions the flag (not docs/cli.md: generated from the flags themselves, one table)."""
    names: set[str] = set()
    for page in [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli.md")]:
        for block in BLOCK_BREAK.split(page.read_text()):
            if "--disable" in block:
                names |= set(BACKTICKED_NAME.findall(block))
    return names


def test_the_docs_list_every_filter_and_disable_accepts_each(tmp_path):
    documented = documented_filter_names()
    assert documented == set(FILTERS), "the docs' --disable list and curation/filters.py differ"
    write_segments([make_trajectory(1)], tmp_path / "raw")
    out = tmp_path / "corpus"
    args = ["build-corpus", "-i", str(tmp_path / "raw"), "-o", str(out), "--workers", "1", "--held-out", "0"]
    result = runner.invoke(app, [*args, *(arg for name in sorted(documented) for arg in ("--disable", name))])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert manifest.config["filters"]["disabled"] == sorted(documented)
    assert manifest.counts["written"] == 1  # one turn, kept: min_turns is off


def test_disable_refuses_an_unknown_filter_by_name(tmp_path):
    result = runner.invoke(app, ["build-corpus", "-i", str(tmp_path), "--disable", "teleport"])
    assert result.exit_code == 2
    assert "unknown filter 'teleport'; known: gui_environment_failures, " in result.output
    assert "min_turns" in result.output


def test_an_unknown_input_format_is_refused_listing_the_known_ones(tmp_path):
    result = runner.invoke(app, ["build-corpus", "-i", str(tmp_path), "--input-format", "csv"])
    assert result.exit_code == 2
    assert f"unknown --input-format 'csv'; known: trajforge, {', '.join(FORMATS)}" in result.output
    assert "chat, atif, agentworldbench" in result.output


def test_held_out_family_holds_out_every_task_of_that_family(tmp_path):
    def episode(i: int, family: str | None):
        meta = {"task_id": f"t{i}"} | ({"family": family} if family else {})
        source = {"kind": "collected", "by": "scripted", "run_id": "r", "origin": f"gen/t{i}#0"}
        return make_trajectory(source=source, metadata=json.dumps(meta), task_description=f"Task {i}.")

    write_segments([episode(i, "kvstore" if i % 2 else None) for i in range(6)], tmp_path / "raw")
    out = tmp_path / "corpus"
    args = ["build-corpus", "-i", str(tmp_path / "raw"), "-o", str(out), "--workers", "1", "--no-near-dedup"]
    result = runner.invoke(app, [*args, "--held-out", "0", "--held-out-family", "kvstore"])
    assert result.exit_code == 0, result.output
    sides = {row["task"]: row["split"] for row in load_cpt(out).to_list()}
    assert sides == {f"task:gen/t{i}": "held_out" if i % 2 else "train" for i in range(6)}
    assert read_manifest(out).config["split"]["held_out_families"] == ["kvstore"]


def test_runs_linked_into_a_raw_folder_are_read_and_a_folder_of_nothing_is_refused(tmp_path):
    write_segments([make_trajectory(task_description=f"Task {i}.") for i in range(3)], tmp_path / "runs" / "a")
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "a").symlink_to(tmp_path / "runs" / "a")  # a raw folder assembled from links to runs
    (tmp_path / "raw" / "again").symlink_to(tmp_path / "runs" / "a")  # the same run twice is read once
    args = ["build-corpus", "-o", str(tmp_path / "corpus"), "--workers", "1", "--no-near-dedup", "--min-turns", "0"]
    result = runner.invoke(app, [*args, "-i", str(tmp_path / "raw")])
    assert result.exit_code == 0, result.output
    assert read_manifest(tmp_path / "corpus").counts["read"] == 3
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(app, [*args, "-i", str(tmp_path / "empty")])
    assert empty.exit_code == 2 and "no " in empty.output and "files to read" in empty.output


@pytest.mark.parametrize(
    "fmt, sample",
    [
        ("atif", "atif_v1_7_subagents.json"),
        ("adp", "adp_handwritten.json"),
        ("openhands", "openhands_events_handwritten.jsonl"),
    ],
)
def test_a_foreign_format_builds_a_corpus(tmp_path, fmt, sample):
    """ATIF v1.7 (sub-agents, copied context) and the hand-written ADP and OpenHands samples, straight into a corpus."""
    out = tmp_path / "corpus"
    args = ["build-corpus", "-i", str(EXAMPLES / sample), "--input-format", fmt, "-o", str(out), "--workers", "1"]
    result = runner.invoke(app, [*args, "--held-out", "0", "--no-near-dedup", "--disable", "min_turns"])
    assert result.exit_code == 0, result.output
    rows = load_cpt(out).to_list()
    expected = {"atif": 2, "adp": 3, "openhands": 2}[fmt]
    assert read_manifest(out).counts["read"] == expected and len(rows) == expected
    assert {row["source"]["by"] for row in rows} == {fmt}
    if fmt == "atif":  # the copied step's turn is never in the loss
        (parent,) = [row for row in rows if row["turns"][0]["loss_weight"] == 0.0]
        assert not parent["turns"][0]["in_loss"] and parent["turns"][0]["loss_spans"] == []


@pytest.mark.parametrize(
    "fmt, turns",
    [("swe-agent", "swe_agent.traj"), ("mini-swe-agent", "mini_swe_agent.traj.json"), ("asciinema", "asciinema.cast")],
)
def test_a_foreign_format_builds_a_corpus_from_its_own_files(tmp_path, fmt, turns):
    """The examples folder holds every format's sample: each format reads its own files only (its SUFFIXES)."""
    expected = [
        t.action.content for t in next(iter(get_format(fmt).read(EXAMPLES / turns, ImportOptions()))).record.turns
    ]
    args = ["build-corpus", "-i", str(EXAMPLES), "-o", str(tmp_path / "corpus"), "--input-format", fmt]
    result = runner.invoke(app, [*args, "--workers", "1", "--held-out", "0", "--no-near-dedup", "--min-turns", "0"])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(tmp_path / "corpus")
    assert manifest.inputs == [str(EXAMPLES / turns)]
    assert manifest.counts["read"] == manifest.counts["written"] == 1
    (row,) = load_cpt(tmp_path / "corpus").to_list()
    written = [turn["action"]["content"] for turn in row["turns"]]
    removed = sum(n for key, n in manifest.counts.items() if key.startswith("turns_removed."))  # the paper's filters
    assert len(written) == manifest.counts["turns_written"] == len(expected) - removed
    assert all(command in expected for command in written)


def build_chat(inputs: Path, out: Path, *extra: str):
    args = ["build-corpus", "-i", str(inputs), "-o", str(out), "--input-format", "chat", "--workers", "1"]
    return runner.invoke(app, [*args, "--held-out", "0.2", "--no-near-dedup", "--min-turns", "0", *extra])


def test_a_datasets_parquet_files_build_the_corpus_their_rows_make_as_json_lines(tmp_path):
    """A Hugging Face dataset's files, rows streamed (spread over the workers by file): the same corpus as the same
    values in JSON Lines; bad rows in the rejections with their file and row. --column without a dataset file
    among the inputs is refused."""
    write_dataset(dataset_chat_rows(300), tmp_path, files=3)
    for name in ("data", "lines"):
        result = build_chat(tmp_path / name, tmp_path / f"corpus-{name}")
        assert result.exit_code == 1, result.output  # some rows are rejected
    counts, line_counts = (read_manifest(tmp_path / f"corpus-{name}").counts for name in ("data", "lines"))
    assert counts == line_counts and (counts["read"], counts["rejected"]) == (300, 7)
    rows, line_rows = (
        [(r["trajectory_id"], r["split"]) for r in load_cpt(tmp_path / f"corpus-{n}").to_list()]
        for n in ("data", "lines")
    )
    assert sorted(rows) == sorted(line_rows)
    rejected = [json.loads(x) for x in (tmp_path / "corpus-data" / "_rejections.jsonl").read_text().splitlines()]
    where = {(r["source"].rsplit("/", 1)[1], r["locator"]) for r in rejected}
    assert ("train-00000-of-00003.parquet", "row 30") in where and len(where) == 7
    result = build_chat(tmp_path / "lines", tmp_path / "c", "--column", "x")
    assert result.exit_code == 2 and "--column: no dataset file chat reads among the inputs" in result.output
