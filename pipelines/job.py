"""The one skeleton of every trajforge Beam job: read -> count -> write shards -> manifest.

Workers write only shards and small per-stage outputs (counts, written shards, rejections, pairs...) as JSON
lines under OUTPUT/_work, through Beam's own file sink (temporary files, then renamed once the bundle
commits: no duplicates when a runner retries). After the pipeline finishes, the launcher reads them back,
reconciles them and writes the manifest last. Every path is a local folder or a URL (`s3://`, `gs://`).
"""

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import apache_beam as beam

from trajforge.pipelines.console import console
from trajforge.schemas import storage
from trajforge.schemas.atomic import remove_stale_temporaries
from trajforge.schemas.names import WORK_DIR

PROGRESS_DIR = "progress"
LEGACY_SPILL_DIR = ".spill"


class JobError(RuntimeError):
    """A job that could not start or finish: one line for the user, no traceback."""


def work_dir(output: str) -> str:
    return storage.join(output, WORK_DIR)


def prepare_output(output: str) -> None:
    """OUTPUT created, and cleared of what an interrupted run left: its work folder and temporaries."""
    storage.make_dirs(output)
    storage.remove_tree(work_dir(output))
    if storage.is_url(output):
        storage.delete(f.path for f in storage.list_files(output) if storage.name(f.path).endswith(".tmp"))
    else:
        storage.remove_tree(storage.join(output, LEGACY_SPILL_DIR))
        remove_stale_temporaries(output)


def finish_output(output: str) -> None:
    storage.remove_tree(work_dir(output))


class SaveOutputs(beam.PTransform):
    """A job's small per-stage outputs, {name: PCollection}, as JSON lines under OUTPUT/_work through one file
    sink for all of them (each sink costs the runner several stages)."""

    def __init__(self, output: str):
        super().__init__()
        self.prefix = storage.join(work_dir(output), "outputs")

    def expand(self, outputs: dict):
        tagged = [
            pcoll | f"Tag {name}" >> beam.Map(lambda value, name=name: json.dumps([name, value], ensure_ascii=False))
            for name, pcoll in sorted(outputs.items())
        ]
        return (
            tagged
            | "All" >> beam.Flatten()
            | "Write" >> beam.io.WriteToText(self.prefix, file_name_suffix=".jsonl", skip_if_empty=True)
        )


def read_outputs(output: str) -> dict[str, list]:
    """What the workers saved with SaveOutputs, by name, in no particular order."""
    found: dict[str, list] = {}
    for info in storage.list_files(work_dir(output)):
        base = storage.name(info.path)
        if base.startswith("outputs-") and base.endswith(".jsonl") and "/beam-temp" not in info.path:
            for line in storage.read_text(info.path).splitlines():
                if line:
                    name, value = json.loads(line)
                    found.setdefault(name, []).append(value)
    return found


def write_json_lines(path: str, entries) -> None:
    storage.write_text(path, "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in entries))


def mark_progress(output: str, label: str, path: str, records: int) -> None:
    """A worker has read one input file: an empty marker whose name carries the count (listing is enough)."""
    key = hashlib.blake2b(path.encode(), digest_size=8).hexdigest()
    with storage.create(storage.join(work_dir(output), PROGRESS_DIR, f"{label}-{key}-{records}.done")) as f:
        f.write(b"\n")  # not empty: Beam's S3 filesystem cannot write an empty object


class ReadShardRows(beam.PTransform):
    """Shard files -> rows, one shard in memory at a time; each file read is marked for the progress display."""

    def __init__(self, files: list[str], output: str):
        super().__init__()
        self.files, self.output = files, output

    def expand(self, pbegin):
        return (
            pbegin
            | "Files" >> beam.Create(self.files)
            | "Spread" >> beam.Reshuffle()
            | "Rows" >> beam.FlatMap(_shard_rows, self.output)
        )


def _shard_rows(path: str, output: str) -> Iterator[dict]:
    from trajforge.schemas.shards import read_shard_table

    rows = read_shard_table(path).to_pylist()
    yield from rows
    mark_progress(output, "rows", path, len(rows))


@dataclass
class Progress:
    files: int = 0
    records: int = 0


def read_progress(output: str) -> Progress:
    progress = Progress()
    try:
        listed = storage.list_files(storage.join(work_dir(output), PROGRESS_DIR))
    except (OSError, ValueError):
        return progress
    for info in listed:
        base = storage.name(info.path)
        if base.endswith(".done"):
            progress.files += 1
            progress.records += int(base.removesuffix(".done").rsplit("-", 1)[1])
    return progress


class ProgressWatcher:
    """The launcher's view of a running job, from the workers' markers: a live bar on a terminal, and a line
    every `every` seconds otherwise (so logs show it too)."""

    def __init__(self, name: str, output: str, total_files: int, every: float = 15.0):
        self.name, self.output, self.total, self.every = name, output, total_files, every
        self.done = threading.Event()

    def __enter__(self) -> "ProgressWatcher":
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()

    def _line(self, progress: Progress) -> str:
        return f"{self.name}: {progress.files}/{self.total} input files read, {progress.records:,} records"

    def _run(self) -> None:
        if console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            columns = [TextColumn(f"{self.name}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[n]}")]
            with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as bar:
                task = bar.add_task(self.name, total=self.total, n="")
                while not self.done.wait(1.0):
                    seen = read_progress(self.output)
                    bar.update(task, completed=seen.files, n=f"{seen.records:,} records")
            return
        started = time.monotonic()
        while not self.done.wait(self.every):
            line = f"{self._line(read_progress(self.output))} ({time.monotonic() - started:.0f} s)"
            console.print(line, highlight=False, soft_wrap=True)


def run_pipeline(name: str, options, output: str, total_files: int, build: Callable[[beam.Pipeline], None]) -> None:
    """Build the job's graph with `build`, run it to the end with progress shown, and turn the ways a job fails
    to start (an unreachable job service, object store or worker pool) into one JobError line. Every function
    of the graph carries the launcher's object-store settings to its workers."""
    from trajforge.pipelines.beam_runtime import runner_for, worker_pool_failure
    from trajforge.pipelines.storage_settings import carry_storage_settings

    pipeline = beam.Pipeline(runner=runner_for(options), options=options)
    build(pipeline)
    carry_storage_settings(pipeline)
    with ProgressWatcher(name, output, total_files):
        try:
            result = pipeline.run()
            result.wait_until_finish()
        except (storage.StorageError, JobError):
            raise
        except Exception as exc:  # noqa: BLE001 - reduced to a line that names what failed; --verbose keeps all
            line = worker_pool_failure(options, str(exc)) or f"the Beam job failed: {failure_line(exc)}"
            raise JobError(f"{name}: {line}") from exc
    state = getattr(result, "state", None)
    if state is not None and str(state).upper().rsplit(".", 1)[-1] not in ("DONE", "UNKNOWN"):
        raise JobError(f"{name}: the Beam job ended in state {state}")


def failure_line(exc: BaseException) -> str:
    """The most telling line of a (possibly remote, possibly nested) error: the last 'SomeError: ...' line of its
    text, which for a worker failure is the original exception."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    named = [ln for ln in lines if ln.split(":", 1)[0].endswith(("Error", "Exception"))]
    return (named[-1] if named else lines[0] if lines else type(exc).__name__)[:500]
