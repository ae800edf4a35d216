"""Foreign formats users already have, imported into and exported from the trajforge record.

Each format module has `read(path, options) -> Iterator[ReadResult]` and `write(records, path) -> int` (a format
trajforge only reads: `refuse_export`), optionally `SUFFIXES`, the file names its reader takes (default: JSON and
JSON Lines), and is registered in FORMATS under its name. A format whose records are JSON values also has
`read_values(source, values, options)`: its records from values with their locators (`read` gives it a file's
`json_values`; a dataset's rows are such values too). `origin_of` is the one rule for a record's `source.origin`.
"""

import importlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Any, NoReturn

from trajforge.schemas import storage
from trajforge.schemas.jsonl import JsonLine, decode_document, iter_json_lines
from trajforge.schemas.records import trajectory_content_id
from trajforge.schemas.registry import Registry
from trajforge.schemas.validation import DEFAULT_MAX_OBSERVATION_CHARS, Problem, ReadResult, validate_record

FORMATS: Registry[str] = Registry("format")  # name -> its module, imported when it is used
FORMATS.add(
    "chat", f"{__name__}.chat", help="OpenAI/ShareGPT `messages` JSON Lines: user = action, assistant = observation"
)
FORMATS.add("atif", f"{__name__}.atif", help="Harbor ATIF v1.x trajectories, written as v1.7")
FORMATS.add("agentworldbench", f"{__name__}.agentworldbench", help="AgentWorldBench evaluation lines")
FORMATS.add(
    "adp",
    f"{__name__}.adp",
    help="Agent Data Protocol 1.x trajectories; import only",
)
FORMATS.add(
    "openhands",
    f"{__name__}.openhands",
    help="OpenHands event streams or evaluation output; import only",
)
FORMATS.add(
    "swe-agent",
    f"{__name__}.swe_agent",
    help="SWE-agent `.traj` files; import only",
)
FORMATS.add(
    "mini-swe-agent",
    f"{__name__}.mini_swe_agent",
    help="mini-swe-agent `.traj.json` files; import only",
)
FORMATS.add(
    "asciinema",
    f"{__name__}.asciinema",
    help="asciinema v2 `.cast` recordings; import only",
)
FORMATS.add("chat-tools", f"{__name__}.chat_tools", help="OpenAI tool-calling chats (SWE-rebench); import only")


@dataclass(frozen=True)
class ImportOptions:
    domain: str | None = None  # None: the format's own, else "other"
    environment: str | None = None
    run_id: str | None = None
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS
    column: str | None = None  # a dataset row's column holding the record (None: the whole row)


def get_format(name: str) -> ModuleType:
    """The format's module; UnknownName (a ValueError) lists the formats."""
    return importlib.import_module(FORMATS.get(name))


Converter = Callable[[Any, str, ImportOptions], tuple[dict | None, list[Problem]]]
JSON_LINES_SUFFIXES = (".jsonl", ".jsonl.gz")


def finish(record: dict | None, problems: list[Problem], options: ImportOptions) -> tuple[Any, list[Problem]]:
    """Give a converted record its content id and validate it against the contract."""
    if problems or record is None:
        return None, problems
    record["trajectory_id"] = trajectory_content_id(record)
    return validate_record(record, options.max_observation_chars)


def json_values(path: str | Path) -> Iterator[JsonLine]:
    """The one reading of a foreign JSON file into values: each line of JSON Lines (.jsonl, .jsonl.gz); any other
    file (.json, .traj) is one value, its locator "file", its JSON errors with their line and column."""
    if str(path).endswith(JSON_LINES_SUFFIXES):
        yield from iter_json_lines(path)
    else:
        yield decode_document("file", storage.read_bytes(path))


def origin_of(source: str | Path, locator: str) -> str:
    """A record's `source.origin`, the one rule of every format: the file's name, and where in it unless the file
    is the record."""
    name = storage.name(str(source))
    return name if locator == "file" else f"{name}:{locator}"


def rejected_value(source: str, value: JsonLine) -> ReadResult | None:
    """The rejection of a value that cannot hold a record (undecodable, or not a JSON object); None for an object."""
    if not value.problems and isinstance(value.value, dict):
        return None
    problems = value.problems or [Problem("", f"expected a JSON object, got {type(value.value).__name__}")]
    return ReadResult(source, value.locator, None, problems, value.raw)


def read_converted(
    source: str, values: Iterable[JsonLine], convert: Converter, options: ImportOptions
) -> Iterator[ReadResult]:
    """The shared reader of foreign formats with one record per JSON object (of a file's json_values, or a
    dataset's rows): convert, validate, never raise."""
    for value in values:
        if (rejected := rejected_value(source, value)) is not None:
            yield rejected
            continue
        record, problems = finish(*convert(value.value, origin_of(source, value.locator), options), options)
        yield ReadResult(source, value.locator, record, problems, None if record else value.raw)


def folders_above(path: str | Path, n: int = 2) -> tuple[str, ...]:
    """The names of the folders a file lies in, nearest first: tools that name a run's folders after the run or
    the instance (swe-agent, mini-swe-agent) say so there."""
    return tuple(folder.name for folder in PurePosixPath(str(path)).parents)[:n]


def resolved_status(resolved: Any) -> str:
    """A run's outcome status from whether it resolved its task (SWE-bench's `resolved`: true/false or 1/0)."""
    if isinstance(resolved, bool) or resolved in (0, 1):
        return "success" if resolved else "failure"
    return "unknown"


def imported_source(by: str, origin: str, options: ImportOptions) -> dict:
    return {"kind": "imported", "by": by, "run_id": options.run_id, "origin": origin}


def text_content(value: Any, path: str, problems: list[Problem]) -> str:
    """Message content as text: a string, or OpenAI-style parts [{"type": "text", "text": ...}]."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in value):
        return "".join(p["text"] for p in value)
    if isinstance(value, list) and (kinds := sorted({str(p.get("type")) for p in value if isinstance(p, dict)
                                                     and not isinstance(p.get("text"), str)})):  # fmt: skip
        problems.append(Problem(path, f"content of type {'/'.join(kinds)}: only text is read"))
        return ""
    problems.append(Problem(path, "missing" if value is None else f"expected text, got {type(value).__name__}"))
    return ""


def object_field(value: Any, key: str) -> dict:
    """An object-valued field of a foreign record, or {} where it has none (for fields that only add detail)."""
    part = value.get(key) if isinstance(value, dict) else None
    return part if isinstance(part, dict) else {}


def shell_turn(index: int, command: str, output: str, exit_code: int | None = None, **metadata: Any) -> dict:
    """One shell command and what it printed, as a turn; `metadata`: what else the source says of the output."""
    observation: dict[str, Any] = {"content": output, "exit_code": exit_code, "is_error": bool(exit_code)}
    if metadata:
        observation["metadata"] = json.dumps(metadata, ensure_ascii=False)
    return {"index": index, "action": {"kind": "shell", "content": command}, "observation": observation}


def refuse_export(name: str) -> NoReturn:
    """The `write` of a format trajforge reads but does not write."""
    raise ValueError(f"{name} is read only: trajforge imports it but does not write it (export to atif or chat)")
