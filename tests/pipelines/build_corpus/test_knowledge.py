"""build-corpus --knowledge: documents become single-turn CPT rows, deduplicated, redacted, counted, capped;
a binary or non-UTF-8 file is rejected by name and nothing else is lost."""

import gzip
import json

import pytest
from typer.testing import CliRunner

from tests.builders import make_trajectory
from tests.schemas.formats.test_roff import MAN
from trajforge.pipelines.cli import app
from trajforge.pipelines.report import build_report
from trajforge.schemas.dataset import load_cpt, stage_rows
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.sinks import write_segments

pytestmark = pytest.mark.slow
runner = CliRunner()


def trajectories(n: int):
    return [
        make_trajectory(
            turns=[
                {
                    "index": i,
                    "action": {"kind": "shell", "content": f"wc -l file{k}-{i}.txt"},
                    "observation": {"content": f"{k * 100 + i} file{k}-{i}.txt " + f"w{k}x{i} " * 40},
                }
                for i in range(3)
            ],
            task_description=f"count lines {k}",
        )
        for k in range(n)
    ]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("knowledge")
    write_segments(trajectories(6), root / "raw")
    docs = root / "docs"
    (docs / "man").mkdir(parents=True)
    (docs / "man" / "wc.1.gz").write_bytes(gzip.compress(MAN.encode()))
    (docs / "tar.md").write_text("# tar\n\n" + "tar czf makes a gzip'd archive; tar tzf lists it.\n" * 30)
    (docs / "copy-of-tar.md").write_text((docs / "tar.md").read_text())  # an exact duplicate
    (docs / "secrets.txt").write_text("Configure with AWS key AKIAIOSFODNN7EXAMPLE and go.\n" * 5)
    (docs / "more.jsonl").write_text(
        "\n".join(
            json.dumps({"text": f"Document {i}: " + f"sort -u keeps one of each line {i}. " * 30}) for i in range(6)
        )
    )
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00IHDR")
    return root


def build(inputs, out, *extra):
    result = runner.invoke(
        app,
        [
            "build-corpus",
            "-i",
            str(inputs / "raw"),
            "-o",
            str(out),
            "--knowledge",
            str(inputs / "docs"),
            "--workers",
            "1",
        ]
        + list(extra),
    )
    assert result.exit_code == 1, result.output  # 1: done, with a rejected file
    return read_manifest(out), result.output


def test_documents_reach_cpt_shards_with_their_own_counts(inputs, tmp_path):
    manifest, output = build(inputs, tmp_path / "corpus")
    c = manifest.counts
    assert manifest.reconciles()
    assert (
        c["read"] == 6 + 1 + 2 + 1 + 6 + 1 and c["rejected"] == 1 and c["deduplicated.near"] == 1
    )  # the copy, under another title
    assert c["knowledge.documents"] == 9 and c["written"] == 15 and c["split.cpt"] == 9
    rejection = json.loads((tmp_path / "corpus" / "_rejections.jsonl").read_text())
    assert rejection["source"].endswith("logo.png") and "binary" in rejection["reasons"][0]
    assert "raw_base64" in rejection  # its bytes are kept
    assert "knowledge: 9 documents" in output

    rows = load_cpt(tmp_path / "corpus")
    docs = [r for r in rows if r["source"]["kind"] == "knowledge"]
    assert (
        sum(len(d["turns"][0]["observation"]["content"]) + len(d["turns"][0]["action"]["content"]) for d in docs)
        == c["chars.knowledge"]
    )
    for doc in docs:
        (turn,) = doc["turns"]
        assert turn["in_loss"] and turn["loss_spans"] == [{"start": 0, "end": len(turn["observation"]["content"])}]
        assert doc["split"] == "cpt"
    by_title = {d["turns"][0]["action"]["content"]: d["turns"][0]["observation"]["content"] for d in docs}
    assert by_title["wc(1)"].startswith("WC(1)") and "AKIAIOSFODNN7EXAMPLE" not in by_title["secrets.txt"]
    assert c["redacted.aws_access_key"] == 5
    cpt_ids = set(stage_rows(rows, "cpt")["trajectory_id"])
    assert {d["trajectory_id"] for d in docs} <= cpt_ids  # CPT trains on them; SFT and RL never see them
    assert not {d["trajectory_id"] for d in docs} & set(stage_rows(rows, "sft")["trajectory_id"])
    assert "9 documents" in build_report(tmp_path / "corpus")


def test_the_share_caps_knowledge_characters(inputs, tmp_path):
    manifest, _ = build(inputs, tmp_path / "capped", "--knowledge-share", "0.4")
    c = manifest.counts
    assert manifest.reconciles() and c["filtered.knowledge_share"] > 0
    listed = (tmp_path / "capped" / "_filtered.jsonl").read_text().splitlines()
    assert sum(json.loads(x)["reason"] == "knowledge_share" for x in listed) == c["filtered.knowledge_share"]
    assert 0 < c.get("chars.knowledge", 0) <= 0.4 / 0.6 * c["chars.trajectories"]
    assert c["written"] == 6 + c["knowledge.documents"]
