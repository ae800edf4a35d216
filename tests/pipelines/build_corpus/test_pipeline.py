"""build-corpus end to end, on the in-process runner: bad input, counts that reconcile, readers, determinism,
interruption and incremental refresh."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import datasets
import duckdb
import pytest

from tests.builders import make_trajectory, report_turns
from trajforge.pipelines.build_corpus.config import BuildConfig
from trajforge.pipelines.build_corpus.pipeline import build_corpus
from trajforge.pipelines.shard_writing import SPILL_DIR
from trajforge.schemas.jsonl import record_to_json
from trajforge.schemas.shards import read_shard_table

TRAJFORGE = str(Path(sys.executable).parent / "trajforge")


def line(record) -> bytes:
    return (record_to_json(record) + "\n").encode()


def distinct(n: int, topic: str, **fields):
    turns = [
        {
            "index": i,
            "action": {"kind": "shell", "content": f"cat {topic}/notes-{i}.md"},
            "observation": {"content": f"{topic} chapter {i}: " + " ".join(f"{topic}{i}w{k}" for k in range(12))},
        }
        for i in range(n)
    ]
    return make_trajectory(turns=turns, task_description=f"read {topic}", **fields)


def write_raw(folder: Path) -> dict:
    """A raw run with one of each kind of problem; returns what it holds."""
    folder.mkdir(parents=True)
    good = [distinct(n, topic) for n, topic in ((2, "apples"), (3, "rivers"), (4, "engines"))]
    duplicate = distinct(3, "rivers", source={"kind": "collected", "by": "x", "run_id": "zz"})
    near_a = make_trajectory(turns=report_turns("done"), task_description="report")
    near_b = make_trajectory(turns=report_turns("finished"), task_description="report")
    short = make_trajectory(1, task_description="short")
    broken = make_trajectory(3, task_description="broken", outcome={"status": "infra_error", "error": "container died"})
    secret_turns = [
        {
            "index": i,
            "action": {"kind": "shell", "content": "cat .env"},
            "observation": {"content": f"API_KEY=sk-{'a' * 24}{i}\nDEBUG=1"},
        }
        for i in range(2)
    ]
    secret = make_trajectory(turns=secret_turns, task_description="secret")
    unknown_version = json.loads(record_to_json(make_trajectory(2)))
    unknown_version["schema_version"] = "9"
    lines = [line(r) for r in (*good, duplicate, near_a, near_b, short, broken, secret)]
    (folder / "segment-a.jsonl").write_bytes(b"".join(lines[:5]) + json.dumps(unknown_version).encode() + b"\n")
    (folder / "segment-b.jsonl").write_bytes(b"".join(lines[5:]) + b"\xff\xfe not utf-8\n" + lines[0][:-30])
    return {"read": 12, "rejected": 3, "exact": 1, "near": 1, "short": 1, "infra": 1, "written": 5}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("build")
    expected = write_raw(root / "raw")
    manifest = build_corpus([str(root / "raw")], root / "corpus", BuildConfig(), workers=1)
    return root, manifest, expected


def test_counts_reconcile_by_reason(built):
    _, manifest, expected = built
    c = manifest.counts
    assert manifest.reconciles()
    assert (c["read"], c["rejected"], c["written"]) == (expected["read"], expected["rejected"], expected["written"])
    assert (c["deduplicated.exact"], c["deduplicated.near"]) == (expected["exact"], expected["near"])
    assert (c["filtered.min_turns"], c["filtered.infra_errors"]) == (expected["short"], expected["infra"])
    assert c["redacted.openai_key"] == 2
    assert manifest.config_hash and manifest.code_version.startswith("0.1.0")
    assert sum(v for k, v in c.items() if k.startswith("category.")) == c["turns_written"]


def test_every_filtered_trajectory_is_listed_with_its_reason(built):
    root, manifest, _ = built
    listed = [json.loads(x) for x in (root / "corpus" / "_filtered.jsonl").read_text().splitlines()]
    by_reason = Counter(f"filtered.{entry['reason']}" for entry in listed)
    assert by_reason == {k: n for k, n in manifest.counts.items() if k.startswith("filtered.")}
    where = {entry["reason"]: (Path(entry["source"]).name, entry["locator"]) for entry in listed}
    assert where == {"min_turns": ("segment-b.jsonl", "line 2"), "infra_errors": ("segment-b.jsonl", "line 3")}
    assert {entry["detail"] for entry in listed} == {"1 turns, fewer than 2", "container died"}


def test_rejections_and_duplicates_are_reported(built):
    root, manifest, _ = built
    rejections = [json.loads(x) for x in (root / "corpus" / "_rejections.jsonl").read_text().splitlines()]
    reasons = {(Path(r["source"]).name, r["locator"]): r["reasons"][0] for r in rejections}
    assert reasons["segment-a.jsonl", "line 6"] == "schema_version: unknown version '9' (this reader accepts 1)"
    assert reasons["segment-b.jsonl", "line 5"].startswith("invalid UTF-8")
    assert reasons["segment-b.jsonl", "line 6"].startswith("invalid JSON (truncated line?)")
    assert any(v.startswith("invalid JSON (truncated line?)") for v in reasons.values())
    pairs = [json.loads(x) for x in (root / "corpus" / "_duplicates.jsonl").read_text().splitlines()]
    assert sorted(p["kind"] for p in pairs) == ["exact", "near"]
    assert manifest.rejection_reasons


def test_shards_hold_masks_and_statistics(built):
    root, manifest, _ = built
    (shard,) = manifest.outputs
    table = read_shard_table(root / "corpus" / shard)
    assert table.num_rows == 5
    rows = table.to_pylist()
    assert [r["trajectory_id"] for r in rows] == sorted(r["trajectory_id"] for r in rows)
    turn = rows[0]["turns"][0]
    assert set(turn["statistics"]) >= {"overlap", "novelty", "jaccard", "length_ratio"}
    assert turn["category"] in {"echo", "boilerplate", "transform", "expansion", "retrieval", "action", "other"}
    assert turn["in_loss"] == bool(turn["loss_spans"])
    secret = next(r for r in rows if r["task_description"] == "secret")
    assert rows[0]["masking_policy"].startswith("paper@")
    assert "<REDACTED:openai_key>" in secret["turns"][0]["observation"]["content"]


def test_readers_datasets_and_duckdb(built):
    root, manifest, _ = built
    path = str(root / "corpus" / manifest.outputs[0])
    ds = datasets.Dataset.from_file(path)
    assert ds.num_rows == 5 and "in_loss" in ds[0]["turns"][0]
    shard = read_shard_table(path)  # noqa: F841 - duckdb reads the Arrow table by its name
    rows = duckdb.sql("select sum(len(turns)) from shard").fetchall()
    assert rows == [(manifest.counts["turns_written"],)]
    in_loss = duckdb.sql("select count(*) from (select unnest(turns) as t from shard) where t.in_loss").fetchone()[0]
    assert in_loss == manifest.counts["turns_in_loss"]


def test_same_input_same_bytes(built, tmp_path):
    root, manifest, _ = built
    again = build_corpus([str(root / "raw")], tmp_path / "corpus", BuildConfig(), workers=2)
    assert again.outputs == manifest.outputs
    assert (tmp_path / "corpus" / again.outputs[0]).read_bytes() == (root / "corpus" / manifest.outputs[0]).read_bytes()


def files_under(folder: Path) -> dict[str, Path]:
    """Every file under `folder` by relative path; tolerant of folders that vanish while it walks."""
    found = {}
    for parent, _, names in os.walk(folder):
        for name in names:
            path = Path(parent) / name
            found[str(path.relative_to(folder))] = path
    return found


def killed_after_first_spill(argv: list[str], out: Path) -> list[str]:
    """Start the build, SIGKILL it as soon as its first spill file exists; what it left. None: it finished first."""
    first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while not any(SPILL_DIR in Path(name).parts for name in files_under(out)):
        if first.poll() is not None:
            return None
        assert time.monotonic() < deadline, "no spill file after 300s"
        time.sleep(0.002)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    return sorted(files_under(out))


@pytest.mark.slow
def test_a_build_killed_mid_write_reruns_to_a_clean_builds_bytes(built, tmp_path):
    root, manifest, _ = built
    argv = [TRAJFORGE, "build-corpus", "-i", str(root / "raw"), "-o", "OUT", "--workers", "1"]
    for attempt in range(3):  # the spill-to-shard window is ~0.1s: a poll that misses it tries again
        out = tmp_path / f"corpus-{attempt}"
        left = killed_after_first_spill([str(out) if a == "OUT" else a for a in argv], out)
        if left is not None:
            break
    assert left is not None, "three builds finished before their first spill file was seen"
    assert "_manifest.json" not in left and any(SPILL_DIR in Path(name).parts for name in left)
    done = subprocess.run([str(out) if a == "OUT" else a for a in argv], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr  # 1: some records were rejected
    printed = (done.stdout + done.stderr).splitlines()
    assert len(printed) < 25 and not any("INFO" in line or "WARNING" in line for line in printed), printed
    clean, rerun = files_under(root / "corpus"), files_under(out)
    assert sorted(rerun) == sorted(clean)  # nothing left over: no spill file, no temporary, no stale shard
    for name in clean:
        if name != "_manifest.json":
            assert rerun[name].read_bytes() == clean[name].read_bytes(), name
    again = json.loads(rerun["_manifest.json"].read_text())
    assert again["outputs"] == manifest.outputs and again["counts"] == manifest.counts


def test_incremental_build_reads_only_new_files(built, tmp_path):
    root, _, _ = built
    raw = tmp_path / "raw"
    raw.mkdir()
    first = [make_trajectory(n, task_description=f"first {n}") for n in (2, 3)]
    (raw / "segment-1.jsonl").write_bytes(b"".join(line(r) for r in first))
    out = tmp_path / "corpus"
    one = build_corpus([str(raw)], out, BuildConfig(), incremental=True, workers=1)
    assert (one.counts["read"], one.counts["written"]) == (2, 2)
    newer = [make_trajectory(4, task_description="second"), first[0]]  # one new, one already in the corpus
    (raw / "segment-2.jsonl").write_bytes(b"".join(line(r) for r in newer))
    two = build_corpus([str(raw)], out, BuildConfig(), incremental=True, workers=1)
    assert (two.counts["read"], two.counts["written"], two.counts["deduplicated.exact"]) == (4, 3, 1)
    assert two.reconciles() and set(one.outputs) < set(two.outputs)
    three = build_corpus([str(raw)], out, BuildConfig(), incremental=True, workers=1)
    assert three.counts == two.counts and three.outputs == two.outputs


def test_every_kind_of_secret_is_redacted_in_the_shards(tmp_path):
    from collections import Counter

    from tests.curation.test_redaction import SECRETS

    turns = [
        {"index": i, "action": {"kind": "shell", "content": f"cat config-{i}.env"}, "observation": {"content": text}}
        for i, (text, _, _) in enumerate(SECRETS)
    ]
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "segment.jsonl").write_bytes(line(make_trajectory(turns=turns, task_description="read the configs")))
    manifest = build_corpus([str(raw)], tmp_path / "corpus", BuildConfig(), workers=1)
    assert manifest.counts["written"] == 1
    found = {k.removeprefix("redacted."): v for k, v in manifest.counts.items() if k.startswith("redacted.")}
    assert found == Counter(kind for _, kind, _ in SECRETS)
    (row,) = read_shard_table(tmp_path / "corpus" / manifest.outputs[0]).to_pylist()
    assert [t["observation"]["content"] for t in row["turns"]] == [expected for _, _, expected in SECRETS]
