import base64
import json

from trajforge.schemas.manifest import Manifest, RejectionWriter, code_version, read_manifest, reason_key
from trajforge.schemas.validation import Problem, ReadResult


def test_manifest_round_trip_and_reconcile(tmp_path):
    manifest = Manifest(stage="import", config={"format": "chat"}, counts={"read": 5, "written": 3, "rejected": 2})
    assert manifest.reconciles()
    assert len(manifest.config_hash) == 16
    manifest.write(tmp_path)
    assert read_manifest(tmp_path) == manifest
    assert not Manifest(stage="x", counts={"read": 5, "written": 3}).reconciles()


def test_code_version_names_the_package():
    assert code_version().startswith("0.1.0")


def test_rejections_keep_raw_bytes_and_count_reasons(tmp_path):
    with RejectionWriter(tmp_path) as rejections:
        rejections.add(ReadResult("a.jsonl", "line 1", None, [Problem("turns[3].index", "expected 3, got 4")], b"{}"))
        rejections.add(ReadResult("a.jsonl", "line 2", None, [Problem("turns[7].index", "expected 7, got 9")], b"\xff"))
        assert not rejections.path.exists()  # written under a temporary name until closed
    lines = [json.loads(x) for x in rejections.path.read_text().splitlines()]
    assert lines[0] == {
        "source": "a.jsonl",
        "locator": "line 1",
        "reasons": ["turns[3].index: expected 3, got 4"],
        "raw": "{}",
    }
    assert base64.b64decode(lines[1]["raw_base64"]) == b"\xff"
    assert rejections.reasons == {"turns[].index: expected 3, got 4": 1, "turns[].index: expected 7, got 9": 1}


def test_reason_key_groups_by_path_shape():
    assert reason_key("turns[3].observation.content: 9 characters exceeds (x)") == (
        "turns[].observation.content: 9 characters exceeds"
    )
