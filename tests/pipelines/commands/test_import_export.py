"""`trajforge import` and `trajforge export`: rejections reported and kept, re-imports replace, round trips keep the
turns."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from tests.builders import EXAMPLES, FORMAT_SAMPLES, make_trajectory, record_dict
from trajforge.pipelines.cli import app
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.sources import read_records

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_import_bad_file_reports_rejects_and_keeps_the_good(tmp_path):
    good = [
        json.dumps({"messages": [{"role": "user", "content": f"ls {i}"}, {"role": "assistant", "content": "a"}]})
        for i in range(3)
    ]
    data = (good[0] + "\n" + '{"messages": [{"role": "user"}]}\n' + good[1] + "\n").encode() + b"\xff\xfe\n"
    data += good[2].encode()[:-5]  # truncated last line
    src = tmp_path / "in.jsonl"
    src.write_bytes(data)
    out = tmp_path / "raw"
    result = run("import", "--format", "chat", src, "--output", out, "--domain", "terminal")
    assert result.exit_code == 1, result.output
    manifest = read_manifest(out)
    assert manifest.counts == {"read": 5, "written": 2, "rejected": 3}
    assert manifest.reconciles()
    assert [r.record.domain for r in read_records([out])] == ["terminal", "terminal"]
    rejections = [json.loads(x) for x in (out / "_rejections.jsonl").read_text().splitlines()]
    assert [r["locator"] for r in rejections] == ["line 2", "line 4", "line 5"]
    assert rejections[0]["reasons"] == [
        "messages[0].content: missing",
        "messages[0]: the last user message has no assistant reply",
    ]


def test_reimport_replaces_and_refuses_foreign_folders(tmp_path):
    out = tmp_path / "raw"
    assert run("import", "-f", "chat", EXAMPLES / "chat.jsonl", "-o", out).exit_code == 0
    first = sorted(p.name for p in out.iterdir())
    assert run("import", "-f", "chat", EXAMPLES / "chat.jsonl", "-o", out).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == first
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.jsonl").write_text(json.dumps(record_dict(make_trajectory())) + "\n")
    result = run("import", "-f", "chat", EXAMPLES / "chat.jsonl", "-o", other)
    assert result.exit_code == 2 and "already holds data" in result.output


def test_missing_input_is_a_usage_error(tmp_path):
    result = run("import", "-f", "chat", tmp_path / "nope.jsonl", "-o", tmp_path / "out")
    assert result.exit_code == 2 and "no such file or directory" in result.output


@pytest.mark.parametrize("fmt", ["chat", "atif", "agentworldbench", "segments"])
def test_export_then_import_keeps_the_turns(tmp_path, fmt):
    raw = tmp_path / "raw"
    domain = ["--domain", "mcp"] if fmt == "agentworldbench" else []  # the benchmark has no "other" task
    run("import", "-f", "chat", EXAMPLES / "chat.jsonl", "-o", raw, *domain)
    target = tmp_path / ("out" if fmt in ("segments", "agentworldbench") else "out.jsonl")
    assert run("export", raw, "-f", fmt, "-o", target).exit_code == 0
    if fmt == "segments":
        back = [r.record for r in read_records([target])]
    else:
        assert run("import", "-f", fmt, target, "-o", tmp_path / "back").exit_code == 0
        back = [r.record for r in read_records([tmp_path / "back"])]
    original = {r.record.turns[0].action.content: r.record for r in read_records([raw])}
    assert len(back) == 3
    for record in back:
        assert [t.observation.content for t in record.turns] == [
            t.observation.content for t in original[record.turns[0].action.content].turns
        ]


def test_export_reports_invalid_input(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(EXAMPLES / "chat.jsonl", raw / "not-trajforge.jsonl")
    result = run("export", raw, "-f", "chat", "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 1
    assert "3 input records rejected" in result.output


@pytest.mark.parametrize("fmt", ["swe-agent", "mini-swe-agent", "asciinema"])
def test_a_format_trajforge_only_reads_is_refused_as_an_export_target(tmp_path, fmt):
    run("import", "-f", "chat", EXAMPLES / "chat.jsonl", "-o", tmp_path / "raw")
    result = run("export", tmp_path / "raw", "-f", fmt, "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert f"{fmt} is read only: trajforge imports it but does not write it" in result.output
    assert not (tmp_path / "out").exists()


def test_import_reads_a_datasets_column_and_refuses_column_without_a_dataset_file(tmp_path):
    import datasets

    conversations = [json.loads(line) for line in (EXAMPLES / "chat.jsonl").read_text().splitlines()]
    table = {"conversation": [json.dumps(c) for c in conversations], "source": ["x"] * len(conversations)}
    datasets.Dataset.from_dict(table).to_parquet(tmp_path / "set.parquet")
    result = run("import", "-f", "chat", tmp_path / "set.parquet", "--column", "conversation", "-o", tmp_path / "raw")
    assert result.exit_code == 0, result.output
    assert read_manifest(tmp_path / "raw").config["column"] == "conversation"
    from_lines = run("import", "-f", "chat", EXAMPLES / "chat.jsonl", "-o", tmp_path / "lines")
    assert from_lines.exit_code == 0
    ids = [sorted(r.record.trajectory_id for r in read_records([tmp_path / f])) for f in ("raw", "lines")]
    assert ids[0] == ids[1] and len(ids[0]) == 3
    result = run("import", "-f", "chat", EXAMPLES / "chat.jsonl", "--column", "conversation", "-o", tmp_path / "x")
    assert result.exit_code == 2 and "--column: no dataset file chat reads among the inputs" in result.output


@pytest.mark.slow
def test_every_formats_import_builds_one_corpus_and_trains_cpt(tmp_path):
    """Issue 56's done-when for the importers: each format's sample imported, the imports built into one corpus,
    the tiny model's CPT trained 2 steps on it."""
    from tests.training.test_stages import SMALL
    from trajforge.schemas.dataset import load_cpt

    imported = 0
    for fmt, (sample, _) in FORMAT_SAMPLES.items():
        result = run("import", "-f", fmt, EXAMPLES / sample, "-o", tmp_path / "raw" / fmt)
        assert result.exit_code == 0, result.output
        imported += read_manifest(tmp_path / "raw" / fmt).counts["written"]
    corpus = tmp_path / "corpus"
    args = ["-i", tmp_path / "raw", "-o", corpus, "--workers", "1", "--held-out", "0", "--no-near-dedup"]
    result = run("build-corpus", *args, "--min-turns", "0")
    assert result.exit_code == 0, result.output
    assert read_manifest(corpus).counts["read"] == imported
    assert {row["source"]["by"] for row in load_cpt(corpus).to_list()} == set(FORMAT_SAMPLES)
    args = ["--data", corpus, "-o", tmp_path / "cpt", "--max-steps", "2", "--eval-every", "0", *SMALL]
    result = run("train", "cpt", *args)
    assert result.exit_code == 0, result.output
    steps = [json.loads(line) for line in (tmp_path / "cpt" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in steps if "loss" in m] == [1, 2]
    assert (tmp_path / "cpt" / "checkpoint-2" / "checkpoint.json").exists()
