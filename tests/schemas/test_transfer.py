from pathlib import Path

import pytest

from trajforge.schemas.formats import FORMATS, ImportOptions
from trajforge.schemas.transfer import ImportJob, ImportTargetError, export_records, import_records

EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"


def test_import_then_export_counts_every_record_and_refuses_a_folder_of_other_data(tmp_path):
    raw = tmp_path / "raw"
    manifest = import_records([EXAMPLES / "chat.jsonl"], ImportJob("chat", raw, ImportOptions(run_id="r")))
    assert manifest.counts == {"read": 3, "written": 3, "rejected": 0} and manifest.config["run_id"] == "r"
    result = export_records([raw], "shards", tmp_path / "shards", per_file=2)
    assert (result.count, result.unit, result.rejected) == (2, "shards", [])
    with pytest.raises(ImportTargetError, match="already holds data that no import wrote"):
        import_records([EXAMPLES / "chat.jsonl"], ImportJob("chat", tmp_path / "shards"))


def test_an_unknown_format_is_refused_listing_the_known_ones(tmp_path):
    known = ", ".join(FORMATS)  # every registered format, in the order --help lists them
    assert known.startswith("chat, atif, agentworldbench")
    with pytest.raises(ValueError, match=f"^unknown format 'csv'; known: {known}$"):
        import_records([EXAMPLES / "chat.jsonl"], ImportJob("csv", tmp_path / "raw"))
