"""A benchmark's child process measured whole: its wall seconds and the peak resident memory of its process tree
(Beam's workers and a command's subprocesses count), sampled every 50 ms from /proc."""

import os
import subprocess
import threading
import time
from pathlib import Path


def tree_rss(pid: int) -> int:
    """Resident memory of a process and all its descendants, in bytes."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            p = int(stat.parent.name)
            children.setdefault(int(fields[1]), []).append(p)
            rss[p] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack += children.get(p, [])
    return total


def timed_tree(argv: list[str], ok: tuple[int, ...] = (0,), **popen) -> tuple[float, int]:
    """Run `argv` (with Popen's `popen` options: cwd, env); its wall seconds and peak tree memory in bytes. An exit
    code outside `ok` stops the benchmark with the child's last stderr."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **popen)
    peak = 0

    def watch():
        nonlocal peak
        while proc.poll() is None:
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    _, err = proc.communicate()
    watcher.join()
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(argv[:4])} failed (exit {proc.returncode}):\n{err.decode()[-2000:]}")
    return time.perf_counter() - start, peak
