"""`trajforge serve` as a user starts it: a real process on a free port, up when it lists its model."""

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

import httpx


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(checkpoint, name: str, flags: tuple[str, ...], key: str | None) -> tuple[subprocess.Popen, str] | None:
    """`trajforge serve` on a free port; None when it died (another process took the port first)."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "trajforge", "serve", str(checkpoint), "--port", str(port), "--model-name", name,
         *flags],
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        try:  # our server, not whatever else may listen there: it serves the model named `name`
            if any(m["id"] == name for m in httpx.get(f"{url}/models", headers=headers, timeout=1).json()["data"]):
                return process, url
        except (httpx.HTTPError, ValueError, KeyError):
            time.sleep(0.5)
    process.kill()
    process.wait()
    return None


@contextmanager
def serving(checkpoint, name: str = "tiny", flags: tuple[str, ...] = (), key: str | None = None):
    """The base URL (at 127.0.0.1) of `trajforge serve CHECKPOINT FLAGS...`; `key` is what it was given to ask for."""
    started = next(filter(None, (_start(checkpoint, name, flags, key) for _ in range(3))), None)
    assert started is not None, "trajforge serve did not come up"
    process, url = started
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
