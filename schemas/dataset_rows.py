"""A Hugging Face dataset's files (parquet, as the Hub holds them, or arrow, as `save_to_disk` writes them) read as
records of a format, streamed a batch of rows at a time: one row (or one column of it) is one JSON value of the
format, so a file of any size is read in flat memory, and a job spreads the files of a large set over its workers.

A row's locator is `row N`, its index in its file (from 0, as `datasets` counts). A cell holding text is decoded
as JSON (sets often store nested records as JSON strings); a struct or list cell is the value without its null
fields: parquet gives every row each field any row has, so a null there is most often a field the record lacked.

The files are read with pyarrow's batches, as `datasets` reads them underneath: its streaming reader's own row
formatting (and its import) cost memory that grew over a long file, where the batches alone stay flat.
"""

import json
from collections.abc import Iterator
from typing import IO, Any

from trajforge.schemas import storage
from trajforge.schemas.formats import ImportOptions, get_format
from trajforge.schemas.jsonl import JsonLine, decode_document
from trajforge.schemas.validation import Problem, ReadResult

DATASET_SUFFIXES = (".parquet", ".arrow")
BATCH_ROWS = 256  # rows turned into Python values at once
# What `save_to_disk` and the Hub write beside a dataset's files: never records.
DATASET_BOOKKEEPING = frozenset({"dataset_info.json", "dataset_infos.json", "dataset_dict.json", "state.json"})


def reads_rows(fmt: str) -> bool:
    """Whether the format's records are JSON values, which a dataset's rows can hold."""
    return hasattr(get_format(fmt), "read_values")


def read_dataset_file(path: str, fmt: str, options: ImportOptions) -> Iterator[ReadResult]:
    """The records of one dataset file in the format, every row read or rejected with its locator."""
    yield from get_format(fmt).read_values(path, dataset_values(path, options.column), options)


def dataset_values(path: str, column: str | None) -> Iterator[JsonLine]:
    """Each row of the file (or its COLUMN) as a JSON value; what keeps the whole file from being read (not a
    parquet or arrow file, no such column, no row) is one problem of the file."""
    kind = "parquet" if path.endswith(".parquet") else "arrow"
    with storage.open_read(path) as f:
        try:
            names, batches = _open(f, kind, column)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            yield JsonLine("file", None, [Problem("", f"not a readable {kind} file: {exc}")], b"")
            return
        if column is not None and column not in names:
            yield JsonLine("file", None, [Problem(column, f"no such column (the columns: {', '.join(names)})")], b"")
            return
        yield from _values(batches, column)


def _open(f: IO[bytes], kind: str, column: str | None) -> tuple[list[str], Iterator]:
    """The file's column names and its record batches, read one after another."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if kind == "parquet":
        parquet = pq.ParquetFile(f)
        names = parquet.schema_arrow.names
        return names, parquet.iter_batches(BATCH_ROWS, columns=[column] if column in names else None)
    try:
        stream = pa.ipc.open_stream(f)  # what save_to_disk writes
        return stream.schema.names, iter(stream)
    except pa.ArrowInvalid:
        f.seek(0)
        whole = pa.ipc.open_file(f)
        return whole.schema.names, (whole.get_batch(i) for i in range(whole.num_record_batches))


def _values(batches: Iterator, column: str | None) -> Iterator[JsonLine]:
    """Each row as a JSON value with its locator; a file that breaks part way is one problem at the row it broke
    at, an empty one a problem of the file, as for any input file."""
    i = 0
    while True:
        try:
            batch = next(batches, None)
        except (OSError, ValueError) as exc:
            yield JsonLine(f"row {i}", None, [Problem("", f"unreadable from this row on: {exc}")], b"")
            return
        if batch is None:
            break
        for start in range(0, batch.num_rows, BATCH_ROWS):
            part = batch.slice(start, BATCH_ROWS)
            for value in part.column(column).to_pylist() if column is not None else part.to_pylist():
                yield _value(f"row {i}", value)
                i += 1
    if i == 0:
        yield JsonLine("file", None, [Problem("", "empty file: no records")], b"")


def _value(locator: str, value: Any) -> JsonLine:
    if value is None or isinstance(value, str):
        return decode_document(locator, (value or "").encode("utf-8"), what="cell")
    value = _without_nulls(value)
    return JsonLine(locator, value, [], json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value
