"""A Hugging Face dataset's files (parquet, or arrow as `save_to_disk` writes them) read as records of a format,
streamed by `datasets` a batch at a time: one row (or one column of it) is one JSON value of the format, so a
file of any size is read in flat memory, and a job spreads the files of a large set over its workers.

A row's locator is `row N`, its index in its file (from 0, as `datasets` counts). A cell holding text is decoded
as JSON (sets often store nested records as JSON strings); a struct or list cell is the value as it is.
"""

import json
from collections.abc import Iterator
from typing import Any

from trajforge.schemas.formats import ImportOptions, get_format
from trajforge.schemas.jsonl import JsonLine, decode_document
from trajforge.schemas.validation import Problem, ReadResult

DATASET_SUFFIXES = (".parquet", ".arrow")
# What `save_to_disk` and the Hub write beside a dataset's files: never records.
DATASET_BOOKKEEPING = frozenset({"dataset_info.json", "dataset_infos.json", "dataset_dict.json", "state.json"})


def reads_rows(fmt: str) -> bool:
    """Whether the format's records are JSON values, which a dataset's rows can hold."""
    return hasattr(get_format(fmt), "read_values")


def read_dataset_file(path: str, fmt: str, options: ImportOptions) -> Iterator[ReadResult]:
    """The records of one dataset file in the format, every row read or rejected with its locator."""
    rows, problem = _stream(path, options.column)
    if problem is not None:
        yield ReadResult(path, "file", None, [problem])
        return
    yield from get_format(fmt).read_values(path, _values(rows, options.column), options)


def _stream(path: str, column: str | None) -> tuple[Any, Problem | None]:
    """The file's rows as a streaming dataset (of COLUMN alone when one is named), or why it cannot be read."""
    import datasets  # a dependency of this path only: `datasets` is slow to import

    builder = "parquet" if path.endswith(".parquet") else "arrow"
    try:
        rows = datasets.load_dataset(builder, data_files=[path], split="train", streaming=True)
    except (OSError, ValueError) as exc:  # an unreadable file: one problem, as an undecodable JSON file is
        return None, Problem("", f"not a readable {builder} file: {exc}")
    if column is None:
        return rows, None
    if column not in (rows.column_names or []):
        return None, Problem(column, f"no such column (the columns: {', '.join(rows.column_names or [])})")
    return rows.select_columns([column]), None


def _values(rows, column: str | None) -> Iterator[JsonLine]:
    """Each row as a JSON value with its locator; a file that breaks part way is one problem at the row it
    broke at, an empty one a problem of the file, as for any input file."""
    i, rows = 0, iter(rows)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            break
        except (OSError, ValueError) as exc:
            yield JsonLine(f"row {i}", None, [Problem("", f"unreadable from this row on: {exc}")], b"")
            return
        yield _value(f"row {i}", row if column is None else row[column])
        i += 1
    if i == 0:
        yield JsonLine("file", None, [Problem("", "empty file: no records")], b"")


def _value(locator: str, value: Any) -> JsonLine:
    if value is None or isinstance(value, str):
        return decode_document(locator, (value or "").encode("utf-8"), what="cell")
    return JsonLine(locator, value, [], json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))
