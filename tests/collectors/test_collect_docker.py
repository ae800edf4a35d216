"""`trajforge collect` for real: Docker sandboxes, the bundled suites, and resume after kill -9."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from trajforge.sandboxes.containers import RUN_LABEL
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.sources import read_records

TRAJFORGE = str(Path(sys.executable).parent / "trajforge")
TASKS = ["count-lines", "python-traceback", "git-branch-merge", "sed-config", "python-repl"]


def collect(out: Path, *args: str, **kwargs) -> subprocess.Popen:
    argv = [TRAJFORGE, "collect", "--suite", "terminal", "--output", str(out), "--run-id", "r", *args]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)


@pytest.mark.slow
def test_collect_records_valid_trajectories(tmp_path, sandbox_image):
    task_args = [a for t in TASKS for a in ("--task", t)]
    proc = collect(tmp_path, *task_args, "--suite", "swe", "--task", "calc-add")
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, output
    assert "holds 6 trajectories" in output
    results = list(read_records([tmp_path / "r"]))
    assert all(r.ok for r in results)
    by_task = {json.loads(r.record.metadata)["task_id"]: r.record for r in results}
    assert by_task["count-lines"].outcome.status == "success"
    assert by_task["calc-add"].outcome.status == "success" and by_task["calc-add"].domain == "swe"
    assert by_task["python-traceback"].turns[0].observation.exit_code == 1
    assert "ZeroDivisionError" in by_task["python-traceback"].turns[0].observation.content
    assert "42" in by_task["python-repl"].turns[2].observation.content
    record = by_task["sed-config"]
    assert record.environment.image_digest.startswith("sha256:") and record.environment.backend == "docker"
    assert json.loads(record.action_space)[0]["name"] == "shell"
    manifest = read_manifest(tmp_path / "r")
    assert manifest.config["image_digest"] == record.environment.image_digest
    assert manifest.counts["written"] == 6 and manifest.reconciles()


@pytest.mark.slow
def test_kill_dash_nine_then_resume(tmp_path, sandbox_image, docker_client):
    args = [
        "--task",
        "count-lines",
        "--task",
        "grep-errors",
        "--task",
        "sort-unique",
        "--task",
        "sed-config",
        "--repeats",
        "3",
        "--flush-every",
        "1",
        "--concurrency",
        "2",
    ]
    first = collect(tmp_path, *args, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(list((tmp_path / "r").glob("segment-*.jsonl"))) < 3:
        assert time.monotonic() < deadline and first.poll() is None, "the first run ended before it could be killed"
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    killed_with = len(list((tmp_path / "r").glob("segment-*.jsonl")))
    assert 3 <= killed_with < 12

    second = collect(tmp_path, *args)
    output, _ = second.communicate(timeout=300)
    assert second.returncode == 0, output
    assert f"{killed_with} already done" in output
    origins = Counter(r.record.source.origin for r in read_records([tmp_path / "r"]))
    assert len(origins) == 12 and set(origins.values()) == {1}
    assert read_manifest(tmp_path / "r").counts["written"] == 12
    leftovers = docker_client.containers.list(all=True, filters={"label": f"{RUN_LABEL}=r"})
    assert leftovers == []


@pytest.mark.slow
def test_the_runs_client_keeps_the_pools_of_forty_concurrent_containers(sandbox_image):
    """docker-py closes its least recently used URL pool past its pool count, even while a request holds one of its
    connections (an episode's container start then failed inside urllib3 at concurrency 32): the run's client
    keeps every pool that forty containers started, inspected and removed at once used."""
    import threading

    from trajforge.collectors.collection import docker_client
    from trajforge.sandboxes.containers import Limits, start_container

    client, errors = docker_client(), []

    def lifecycle():
        try:
            container = start_container(client, sandbox_image, "pytest-pools", Limits(), os.getpid())
            container.reload()
            container.remove(force=True)
        except Exception as exc:  # noqa: BLE001 - every failure is the test's finding
            errors.append(repr(exc))

    threads = [threading.Thread(target=lifecycle) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    (adapter,) = client.api.adapters.values()
    assert len(adapter.pools) > 40 * 2  # each container's own URLs: none of them evicted (25 by default)
