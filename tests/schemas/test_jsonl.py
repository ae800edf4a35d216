import gzip
import json

import pytest

from tests.builders import make_trajectory, record_dict
from trajforge.schemas.jsonl import iter_json_lines, read_segment, record_to_json
from trajforge.schemas.sinks import write_segments


def write_lines(path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(lines))


def good_line(n: int = 3) -> bytes:
    return (record_to_json(make_trajectory(n)) + "\n").encode()


def test_segment_round_trip(tmp_path):
    records = [make_trajectory(n) for n in (1, 2, 3)]
    (path,) = write_segments(records, tmp_path)
    results = list(read_segment(path))
    assert [r.record for r in results] == records
    assert not list(tmp_path.glob(".*tmp"))


def test_gzip_segment(tmp_path):
    path = tmp_path / "s.jsonl.gz"
    path.write_bytes(gzip.compress(good_line() + good_line(2)))
    assert [r.ok for r in read_segment(path)] == [True, True]


def test_truncated_last_line_keeps_the_valid_records(tmp_path):
    path = tmp_path / "s.jsonl"
    write_lines(path, [good_line(1), good_line(2), good_line(3)[:-40]])
    results = list(read_segment(path))
    assert [r.ok for r in results] == [True, True, False]
    assert results[2].locator == "line 3"
    assert results[2].reasons()[0].startswith("invalid JSON (truncated line?)")
    assert results[2].raw == good_line(3)[:-40]


def test_invalid_utf8(tmp_path):
    path = tmp_path / "s.jsonl"
    bad = good_line(2).replace(b"step 1", b"step \xff\xfe")
    write_lines(path, [good_line(1), bad, good_line(3)])
    results = list(read_segment(path))
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].reasons()[0].startswith("invalid UTF-8 at byte ")
    assert results[1].raw == bad


def test_wrong_type_in_a_field(tmp_path):
    data = record_dict(make_trajectory(2))
    data["turns"][1]["observation"]["is_error"] = "no"
    path = tmp_path / "s.jsonl"
    write_lines(path, [json.dumps(data).encode() + b"\n", good_line(1)])
    results = list(read_segment(path))
    assert [r.ok for r in results] == [False, True]
    assert results[0].reasons()[0].startswith("turns[1].observation.is_error: ")


def test_unknown_schema_version(tmp_path):
    data = {**record_dict(make_trajectory(2)), "schema_version": "2"}
    path = tmp_path / "s.jsonl"
    write_lines(path, [good_line(1), json.dumps(data).encode() + b"\n"])
    results = list(read_segment(path))
    assert [r.ok for r in results] == [True, False]
    assert results[1].reasons() == ["schema_version: unknown version '2' (this reader accepts 1)"]


@pytest.mark.slow
def test_fifty_megabyte_observation(tmp_path):
    data = record_dict(make_trajectory(2))
    data["turns"][0]["observation"]["content"] = "y" * (50 * 1024 * 1024)
    path = tmp_path / "s.jsonl"
    write_lines(path, [good_line(1), json.dumps(data).encode() + b"\n", good_line(3)])
    results = list(read_segment(path))
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].reasons()[0] == (
        "turns[0].observation.content: 52,428,800 characters exceeds the limit of 8,388,608"
    )


def test_line_over_the_byte_limit_is_skipped_not_loaded(tmp_path):
    path = tmp_path / "s.jsonl"
    write_lines(path, [good_line(1), b'{"x": "' + b"z" * 5000 + b'"}\n', good_line(2)])
    lines = list(iter_json_lines(path, max_line_bytes=1000))
    assert [line.problems == [] for line in lines] == [True, False, True]
    assert str(lines[1].problems[0]) == "line longer than 1,000 bytes (5,010)"


def test_empty_file(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    results = list(read_segment(path))
    assert len(results) == 1 and not results[0].ok
    assert results[0].reasons() == ["empty file: no records"]


def test_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "s.jsonl"
    write_lines(path, [b"\n", good_line(1), b"  \n"])
    assert [r.ok for r in read_segment(path)] == [True]


def test_not_an_object(tmp_path):
    path = tmp_path / "s.jsonl"
    write_lines(path, [b"[1, 2]\n"])
    assert list(read_segment(path))[0].reasons() == ["expected a JSON object, got list"]
