"""Write a file under a temporary name and rename it into place, so readers never see half a file."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()  # what open() would give; mkstemp's 0600 would hide outputs from other users


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "wb") -> Iterator[IO]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    with atomic_write(path) as f:
        f.write(data)
    return Path(path)


def remove_stale_temporaries(folder: str | Path) -> int:
    """Temporary files atomic_write left behind when its process was killed mid-write (rerunning cleans up)."""
    removed = 0
    for path in Path(folder).rglob(".*.tmp"):
        if path.is_file():
            path.unlink()
            removed += 1
    return removed
