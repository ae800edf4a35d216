"""JSON Lines: tolerant line reading (bad lines become problems, never exceptions) and raw segment files."""

import contextlib
import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from trajforge.schemas import storage
from trajforge.schemas.records import Trajectory
from trajforge.schemas.validation import DEFAULT_MAX_OBSERVATION_CHARS, Problem, ReadResult, validate_record

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
SEGMENT_SUFFIXES = (".jsonl", ".jsonl.gz")


@dataclass
class JsonLine:
    locator: str
    value: Any  # None when problems is not empty
    problems: list[Problem]
    raw: bytes


@contextlib.contextmanager
def _open(path: str | Path) -> Iterator[IO[bytes]]:
    with storage.open_read(path) as raw:
        if str(path).endswith(".gz"):
            with gzip.open(raw, "rb") as f:
                yield f
        else:
            yield raw


def iter_json_lines(path: str | Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[JsonLine]:
    """Decode each line of a JSON Lines file (a local path or a URL); an empty file yields one problem."""
    seen_any = False
    with _open(path) as f:
        number = 0
        while True:
            line = f.readline(max_line_bytes + 1)
            if not line:
                break
            number += 1
            locator = f"line {number}"
            if len(line) > max_line_bytes and not line.endswith(b"\n"):
                dropped = _skip_rest_of_line(f)
                seen_any = True
                yield JsonLine(
                    locator,
                    None,
                    [Problem("", f"line longer than {max_line_bytes:,} bytes ({len(line) + dropped:,})")],
                    line[:4096],
                )
                continue
            if not line.strip():
                continue
            seen_any = True
            yield decode_line(locator, line)
    if not seen_any:
        yield JsonLine("file", None, [Problem("", "empty file: no records")], b"")


def _skip_rest_of_line(f: IO[bytes]) -> int:
    skipped = 0
    while chunk := f.readline(1 << 20):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


def decode_line(locator: str, line: bytes) -> JsonLine:
    hint = " (truncated line?)" if not line.endswith(b"\n") else ""
    return _decode(locator, line, lambda exc: f"invalid JSON{hint}: {exc.msg} at column {exc.colno}")


def decode_document(locator: str, raw: bytes, what: str = "file") -> JsonLine:
    """A whole document's JSON text (a .json file, a dataset's cell: `what`) as one value; an error says its line
    and column, an empty document is one problem."""
    if not raw.strip():
        return JsonLine(locator, None, [Problem("", f"empty {what}: no records")], raw)
    return _decode(locator, raw, lambda exc: f"invalid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")


def _decode(locator: str, raw: bytes, invalid: Callable[[json.JSONDecodeError], str]) -> JsonLine:
    """UTF-8 then JSON; `invalid` words a JSON error as its caller locates it (a line's column, a document's line)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JsonLine(locator, None, [Problem("", f"invalid UTF-8 at byte {exc.start}")], raw)
    try:
        return JsonLine(locator, json.loads(text), [], raw)
    except json.JSONDecodeError as exc:
        return JsonLine(locator, None, [Problem("", invalid(exc))], raw)


def read_segment(path: str | Path, max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS) -> Iterator[ReadResult]:
    """Read a raw segment of trajforge records, validating each line."""
    for line in iter_json_lines(path):
        if line.problems:
            yield ReadResult(str(path), line.locator, None, line.problems, line.raw)
            continue
        record, problems = validate_record(line.value, max_observation_chars)
        yield ReadResult(str(path), line.locator, record, problems, None if record else line.raw)


def record_to_json(record: Trajectory) -> str:
    return record.model_dump_json(exclude_none=True)
