"""Every stage writes a manifest (inputs, config hash, code version, counts that reconcile) and a rejection file."""

import base64
import json
import re
import subprocess
from datetime import UTC, datetime
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trajforge.schemas import counts, storage
from trajforge.schemas.atomic import atomic_write
from trajforge.schemas.hashing import config_hash
from trajforge.schemas.names import MANIFEST_NAME, REJECTIONS_NAME
from trajforge.schemas.validation import ReadResult
from trajforge.schemas.version import SCHEMA_VERSION


@cache
def code_version() -> str:
    """Package version, plus the git commit (and '-dirty') when running from a checkout."""
    try:
        package = version("trajforge")
    except PackageNotFoundError:
        package = "0+unknown"
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return package
    return f"{package}+{commit}"


class Manifest(BaseModel):
    stage: str
    schema_version: str = SCHEMA_VERSION
    code_version: str = Field(default_factory=code_version)
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    config: dict[str, Any] = {}
    config_hash: str = ""
    inputs: list[str] = []
    fingerprints: dict[str, str] = {}  # input -> "size:mtime_ns", what an incremental build compares
    outputs: list[str] = []
    # read = written + rejected (+ deduplicated + filtered, for the stages that do those); names: schemas/counts.py
    counts: dict[str, int] = {}
    rejection_reasons: dict[str, int] = {}
    timings: dict[str, float] = {}

    def model_post_init(self, _context: Any) -> None:
        if not self.config_hash:
            self.config_hash = config_hash(self.config)

    def reconciles(self) -> bool:
        """read = written + rejected + deduplicated + filtered, each summed over its reasons (`filtered.x`)."""
        return counts.reconciles(self.counts)

    def write(self, directory: str | Path) -> str:
        """OUTPUT/_manifest.json, written last (a folder or a URL): a stage's output is complete once it exists."""
        return storage.write_text(storage.join(directory, MANIFEST_NAME), self.model_dump_json(indent=2) + "\n")


def read_manifest(directory: str | Path) -> Manifest:
    return Manifest.model_validate_json(storage.read_text(storage.join(directory, MANIFEST_NAME)))


def reason_key(problem: str) -> str:
    """Group rejection reasons by kind: 'turns[3].action.kind: ...' and 'turns[9].action.kind: ...' are one."""
    return re.sub(r"\[\d+\]", "[]", problem.split(" (")[0])


def rejection_entry(result: ReadResult) -> dict[str, Any]:
    """A rejected record as the rejection file keeps it: where, every reason, and its raw bytes."""
    entry: dict[str, Any] = {"source": result.source, "locator": result.locator, "reasons": result.reasons()}
    if result.raw is not None:
        try:
            entry["raw"] = result.raw.decode("utf-8")
        except UnicodeDecodeError:
            entry["raw_base64"] = base64.b64encode(result.raw).decode("ascii")
    return entry


class RejectionWriter:
    """Quarantine: one JSON line per rejected record with every reason and the raw bytes, so nothing is lost."""

    def __init__(self, directory: str | Path):
        self.path = Path(directory) / REJECTIONS_NAME
        self._context = atomic_write(self.path, "w")
        self._file = self._context.__enter__()
        self.count = 0
        self.reasons: dict[str, int] = {}

    def add(self, result: ReadResult) -> None:
        entry = rejection_entry(result)
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self.count += 1
        for reason in {reason_key(r) for r in entry["reasons"]}:
            self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def close(self) -> None:
        self._context.__exit__(None, None, None)

    def __enter__(self) -> "RejectionWriter":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.close()
        else:
            self._context.__exit__(*exc)
