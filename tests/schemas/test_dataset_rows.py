"""A Hugging Face dataset's parquet and arrow files read row by row, streamed: the same records as the same values
read from JSON Lines, each bad row rejected with its file and row."""

import json

from tests.builders import EXAMPLES, dataset_chat_rows, write_dataset
from trajforge.schemas.formats import ImportOptions
from trajforge.schemas.sources import read_records
from trajforge.schemas.transfer import ImportJob, import_records

ROWS = 300


def content(record) -> dict:
    """A record without where it was read from (a row locator or a line)."""
    data = record.model_dump(exclude_none=True)
    data["source"].pop("origin")
    return data


def test_rows_read_streaming_are_the_records_their_values_make_as_json_lines(tmp_path):
    rows = dataset_chat_rows(ROWS)
    write_dataset(rows, tmp_path, files=3)
    streamed = list(read_records([tmp_path / "data"], "chat"))
    lines = list(read_records([tmp_path / "lines"], "chat"))
    assert len(streamed) == len(lines) == ROWS
    assert [r.ok for r in streamed] == [r.ok for r in lines]
    assert [content(r.record) for r in streamed if r.ok] == [content(r.record) for r in lines if r.ok]
    assert [r.reasons() for r in streamed] == [r.reasons() for r in lines]
    assert [r.locator for r in streamed[:3]] == ["row 0", "row 1", "row 2"]  # each file from row 0
    assert streamed[100].locator == "row 0" and streamed[100].source.endswith("train-00001-of-00003.parquet")
    assert streamed[0].record.source.origin == "train-00000-of-00003.parquet:row 0"


def test_import_sends_bad_rows_to_the_rejection_file_with_their_row(tmp_path):
    write_dataset(dataset_chat_rows(ROWS), tmp_path, files=3)
    manifest = import_records([tmp_path / "data"], ImportJob("chat", tmp_path / "raw"))
    bad = [i for i in range(ROWS) if i % 50 == 7 or i == 30]
    assert manifest.counts == {"read": ROWS, "written": ROWS - len(bad), "rejected": len(bad)}
    rejected = [json.loads(line) for line in (tmp_path / "raw" / "_rejections.jsonl").read_text().splitlines()]
    assert [(r["source"].rsplit("/", 1)[1], r["locator"]) for r in rejected] == [
        (f"train-{i // 100:05d}-of-00003.parquet", f"row {i % 100}") for i in bad
    ]
    assert rejected[1]["reasons"] == [
        "messages[1].role: unsupported role 'robot'",
        "messages[2]: an assistant message with no user message before it",
    ]
    assert json.loads(rejected[0]["raw"])["id"] == 7  # the row as it was, to look at


def test_a_column_of_json_text_and_an_arrow_dataset_saved_to_disk(tmp_path):
    """ATIF trajectories in a `trajectory` column of JSON text, in the layout `save_to_disk` writes (arrow files
    beside dataset_info.json and state.json, which are not records): a cell that is not JSON, or is empty, is a
    rejected row; a column the files lack rejects each file."""
    import datasets

    atif = json.loads((EXAMPLES / "atif_terminal.json").read_text())
    cells = [json.dumps({**atif, "session_id": f"s-{i}"}) for i in range(20)]
    cells[4], cells[9] = cells[4][:100], ""
    datasets.Dataset.from_dict({"trajectory": cells, "n": list(range(20))}).save_to_disk(tmp_path / "saved")
    results = list(read_records([tmp_path / "saved"], "atif", ImportOptions(column="trajectory")))
    assert [r.locator for r in results if not r.ok] == ["row 4", "row 9"]
    assert results[4].reasons()[0].startswith("invalid JSON: Unterminated string starting at")
    assert results[9].reasons() == ["empty cell: no records"]
    sessions = [json.loads(r.record.metadata)["atif"]["session_id"] for r in results if r.ok]
    assert sessions == [f"s-{i}" for i in range(20) if i not in (4, 9)]
    (missing,) = read_records([tmp_path / "saved"], "atif", ImportOptions(column="steps"))
    assert (missing.locator, missing.reasons()) == ("file", ["steps: no such column (the columns: trajectory, n)"])


def test_a_file_that_cannot_be_read_or_holds_no_row_is_one_rejection(tmp_path):
    import pyarrow as pa

    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with (
        pa.OSFile(str(tmp_path / "empty.arrow"), "wb") as sink,
        pa.ipc.new_stream(sink, pa.schema([("a", pa.string())])),
    ):
        pass
    bad, empty = read_records([tmp_path], "chat")
    assert bad.locator == "file" and bad.reasons()[0].startswith("not a readable parquet file")
    assert (empty.locator, empty.reasons()) == ("file", ["empty file: no records"])
