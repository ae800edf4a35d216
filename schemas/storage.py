"""Paths that may be URLs: every read, list, write, rename and delete of a pipeline's data goes through here.

A URL (`s3://bucket/key`, `gs://...`, anything with a scheme) goes through Beam's `FileSystems`, so any
filesystem Beam supports works as input and output; a plain path stays on the local disk (what Beam's local
filesystem would do too), with fsync'd atomic writes. Beam is imported only when a URL is used.
"""

import contextlib
import os
import posixpath
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from trajforge.schemas.atomic import atomic_write


class StorageError(OSError):
    """A store that cannot be reached or listed: one line that names the path."""


def cache_root() -> Path:
    """Where trajforge keeps what it can rebuild (local copies of remote shards, recorded starting states, MCP
    server packages): $TRAJFORGE_CACHE, else ~/.cache/trajforge."""
    return Path(os.environ.get("TRAJFORGE_CACHE") or Path.home() / ".cache" / "trajforge")


def is_url(path: str | Path) -> bool:
    return "://" in str(path)


def join(base: str | Path, *parts: str) -> str:
    if is_url(base):
        return posixpath.join(str(base).rstrip("/"), *parts)
    return str(Path(base, *parts))


def name(path: str | Path) -> str:
    return posixpath.basename(str(path).rstrip("/"))


_ours = None  # the options this module gave FileSystems itself (empty ones, or a job's carried to a worker)


def _filesystems():
    """Beam's FileSystems. Outside a Beam job (collect, inspect, report, eval, train) nothing has set its options,
    and Beam's S3 filesystem refuses to work without any: it gets empty ones, so the store's settings come from
    the AWS environment (AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_DEFAULT_REGION, ...) through boto3."""
    global _ours
    from apache_beam.io.filesystems import FileSystems

    if FileSystems._pipeline_options is None:
        from apache_beam.options.pipeline_options import PipelineOptions

        _ours = PipelineOptions([])
        FileSystems.set_options(_ours)
    return FileSystems


def current_options() -> dict:
    """The filesystem options this process uses (the launcher's: endpoints, regions, credentials flags), for a
    job to carry to its workers (pipelines/storage_settings.py)."""
    options = _filesystems()._pipeline_options
    if options is None:
        return {}
    return {k: v for k, v in options.get_all_options(drop_default=True).items() if isinstance(v, str | bool)}


def use_options(options: dict) -> None:
    """On a worker started without the job's options (a worker pool's workers are), give Beam's FileSystems the
    launcher's, so that a URL reaches the same store; a process whose options Beam set (the launcher, a worker
    Beam handed the job's options) keeps its own."""
    global _ours
    from apache_beam.io.filesystems import FileSystems

    current = FileSystems._pipeline_options
    if options and (current is None or current is _ours):
        from apache_beam.options.pipeline_options import PipelineOptions

        _ours = PipelineOptions.from_dictionary(options)
        FileSystems.set_options(_ours)


_reachable: set[tuple[str | None, str]] = set()  # (endpoint, bucket) pairs that answered in this process


def check_reachable(paths: Iterable[str | Path], timeout: float = 5.0) -> None:
    """Each s3:// bucket among PATHS must answer (Beam's S3 client would retry an unreachable endpoint for
    minutes): a StorageError naming the path if it does not. Asked once per bucket and process, with the
    settings Beam's S3 filesystem uses (its options, else the AWS environment)."""
    buckets = {str(p).split("/")[2]: str(p) for p in paths if str(p).startswith("s3://")}
    if not buckets:
        return
    from apache_beam.options.pipeline_options import S3Options

    s3 = _filesystems()._pipeline_options.view_as(S3Options)
    buckets = {b: p for b, p in buckets.items() if (s3.s3_endpoint_url, b) not in _reachable}
    if not buckets:
        return
    import boto3
    import botocore.config
    import botocore.exceptions

    client = boto3.client(
        "s3",
        endpoint_url=s3.s3_endpoint_url,
        aws_access_key_id=s3.s3_access_key_id,
        aws_secret_access_key=s3.s3_secret_access_key,
        aws_session_token=s3.s3_session_token,
        region_name=s3.s3_region_name,
        config=botocore.config.Config(
            connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1, "mode": "standard"}
        ),
    )
    for bucket, path in buckets.items():
        try:
            client.head_bucket(Bucket=bucket)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise StorageError(f"{path}: the object store does not answer for bucket {bucket!r} ({exc})") from exc
        _reachable.add((s3.s3_endpoint_url, bucket))


@dataclass(frozen=True)
class FileInfo:
    path: str
    size: int
    mtime_ns: int


def _matches(pattern: str) -> list:
    from apache_beam.io.filesystem import BeamIOError

    try:
        return _filesystems().match([pattern])[0].metadata_list
    except BeamIOError as exc:
        cause = next(iter(exc.exception_details.values()), exc) if getattr(exc, "exception_details", None) else exc
        raise StorageError(f"{pattern}: cannot list ({_first_line(cause)})") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def list_files(root: str | Path) -> list[FileInfo]:
    """Every file under a folder (recursively), sorted by path; a file given directly is itself."""
    root = str(root)
    if not is_url(root):
        path = Path(root)
        found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        return [FileInfo(str(p), (s := p.stat()).st_size, s.st_mtime_ns) for p in found]
    check_reachable([root])
    prefix = root.rstrip("/")
    found = {m.path: m for m in _matches(prefix) if m.path == prefix}
    if not found:
        found = {m.path: m for m in _matches(prefix + "/**")}
    return [
        FileInfo(p, m.size_in_bytes, int(round((m.last_updated_in_seconds or 0) * 1e9)))
        for p, m in sorted(found.items())
    ]


def is_dir(path: str | Path) -> bool:
    if not is_url(path):
        return Path(path).is_dir()
    prefix = str(path).rstrip("/") + "/"
    return any(f.path.startswith(prefix) for f in list_files(path))


def exists(path: str | Path) -> bool:
    if not is_url(path):
        return Path(path).exists()
    check_reachable([path])
    try:
        return _filesystems().exists(str(path))
    except Exception as exc:  # noqa: BLE001 - a client error of any filesystem: one line that names the path
        raise StorageError(f"{path}: cannot reach ({_first_line(exc)})") from exc


def open_read(path: str | Path) -> IO[bytes]:
    if not is_url(path):
        return open(path, "rb")
    from apache_beam.io.filesystem import CompressionTypes

    check_reachable([path])
    return _filesystems().open(str(path), compression_type=CompressionTypes.UNCOMPRESSED)


def read_bytes(path: str | Path) -> bytes:
    with open_read(path) as f:
        return f.read()


def read_text(path: str | Path) -> str:
    return read_bytes(path).decode("utf-8")


@contextlib.contextmanager
def open_write(path: str | Path) -> Iterator[IO[bytes]]:
    """Write under a temporary name next to PATH and rename it into place: readers never see half a file."""
    if not is_url(path):
        with atomic_write(path, "wb") as f:
            yield f
        return
    from apache_beam.io.filesystem import CompressionTypes

    check_reachable([path])
    fs = _filesystems()
    path = str(path)
    folder, base = posixpath.split(path)
    tmp = posixpath.join(folder, f".{base}.{uuid.uuid4().hex[:8]}.tmp")
    f = fs.create(tmp, mime_type="application/octet-stream", compression_type=CompressionTypes.UNCOMPRESSED)
    try:
        yield f
        f.close()
        fs.rename([tmp], [path])
    except BaseException:
        with contextlib.suppress(Exception):
            f.close()
        with contextlib.suppress(Exception):
            fs.delete([tmp])
        raise


def create(path: str | Path) -> IO[bytes]:
    """A plain (not atomic) new file, for scratch files that only count once a later step lists them."""
    if not is_url(path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return open(path, "wb")
    from apache_beam.io.filesystem import CompressionTypes

    return _filesystems().create(str(path), compression_type=CompressionTypes.UNCOMPRESSED)


def write_bytes(path: str | Path, data: bytes) -> str:
    """Write a whole file atomically. Beam's S3 filesystem cannot create an empty object (its multipart upload
    needs a part), so under a URL an empty file is left out, and one from an earlier run removed."""
    if is_url(path) and not data:
        if exists(path):
            delete([path])
        return str(path)
    with open_write(path) as f:
        f.write(data)
    return str(path)


def write_text(path: str | Path, text: str) -> str:
    return write_bytes(path, text.encode("utf-8"))


def delete(paths: Iterable[str | Path]) -> None:
    paths = [str(p) for p in paths]
    local = [p for p in paths if not is_url(p)]
    for p in local:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)
    if remote := [p for p in paths if is_url(p)]:
        _filesystems().delete(remote)


def remove_tree(path: str | Path) -> None:
    """A folder and everything under it; nothing if it is not there."""
    if not is_url(path):
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        return
    if files := [f.path for f in list_files(path)]:
        delete(files)


def make_dirs(path: str | Path) -> None:
    """Local folders are created; object stores have none to create."""
    if not is_url(path):
        Path(path).mkdir(parents=True, exist_ok=True)
