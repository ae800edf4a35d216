"""Flags mean what they say for the three Beam commands: only what follows `--` reaches Beam, an unknown flag
is exit code 2 naming it with the closest real one, and a job that cannot start is one line, not a traceback."""

import os
import socket
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tests.pipelines.test_job import ROOT, free_port, portable, start  # noqa: F401 - portable: job service, pool
from trajforge.pipelines.cli import app

runner = CliRunner()
JOBS = ["build-corpus", "curate-sft", "prepare-rl"]


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("job", JOBS)
def test_a_mistyped_flag_is_named_with_the_closest_one(job, tmp_path):
    flag, closest = ("--masking-polcy", "--masking-policy") if job == "build-corpus" else ("--wrokers", "--workers")
    result = run(job, "-o", tmp_path / "out", flag, "information")
    assert result.exit_code == 2
    assert flag in result.output and closest in result.output
    assert not (tmp_path / "out").exists()


def test_an_extra_argument_before_the_separator_is_an_error(tmp_path):
    result = run("build-corpus", "-o", tmp_path / "out", "--runner=FlinkRunner")
    assert result.exit_code == 2 and "--runner" in result.output


@pytest.mark.parametrize(
    "beam, expected",
    [
        (["--runnr=FnApiRunner"], "unknown Beam option --runnr (did you mean --runner?)"),
        (["--runner=NoSuchRunner"], "--runner=NoSuchRunner"),
    ],
)
def test_beam_options_are_checked_before_the_job_starts(beam, expected, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    result = run("prepare-rl", "-i", raw, "-o", tmp_path / "out", "--", *beam)
    assert result.exit_code == 2
    assert expected in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_an_unreachable_job_service_is_one_line(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    beam = ["--runner=PortableRunner", f"--job_endpoint=localhost:{port}", "--environment_type=LOOPBACK"]
    result = run("build-corpus", "-i", tmp_path, "-o", tmp_path / "out", "--", *beam)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"no Beam job service answers at --job_endpoint=localhost:{port} (5 s)"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("job", JOBS)
def test_a_stopped_worker_pool_is_one_line(job, portable, corpus_dir, tmp_path):  # noqa: F811
    port = free_port()
    pool = start(
        [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", f"--service_port={port}"], port, tmp_path
    )
    pool.terminate()
    pool.wait(timeout=30)
    job_service = [flag for flag in portable if not flag.startswith("--environment_config")]
    data = corpus_dir.parent / "raw" if job == "build-corpus" else corpus_dir
    argv = [sys.executable, "-m", "trajforge", job, "-i", str(data), "-o", str(tmp_path / "out"), "--", *job_service]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [*argv, f"--environment_config=localhost:{port}"], env=env, capture_output=True, text=True, timeout=90
        )
    except subprocess.TimeoutExpired:
        # Seen once, in a clean-clone run of the whole suite: the job never ended (a few seconds in every other run).
        # A known open bug, not a pass: the job can wait forever when Beam's job service does not report the failed
        # StartWorker. Kept visible (xfail) rather than stalling the suite for pytest's 600 s.
        pytest.xfail("the job did not end within 90 s of its worker pool being stopped (known open hang)")
    said = (done.stdout + done.stderr).strip().splitlines()  # as a terminal shows it: Beam's logs included
    assert done.returncode == 2 and said == [
        f"{job}: no Beam worker pool answers at --environment_config=localhost:{port}"
    ]


def test_an_unreachable_object_store_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    beam = [f"--s3_endpoint_url=http://127.0.0.1:{port}", "--s3_access_key_id=x", "--s3_secret_access_key=y"]
    result = run("build-corpus", "-i", "s3://nowhere/raw", "-o", tmp_path / "out", "--", *beam)
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("s3://nowhere/raw") and "Traceback" not in result.output


@pytest.mark.parametrize("job", ["prepare-rl", "curate-sft"])
def test_a_truncated_shard_is_named(job, tmp_path, corpus_dir):
    shard = sorted((corpus_dir / "cpt").glob("*.arrow"))[0]
    broken = tmp_path / "corpus" / "cpt" / shard.name
    broken.parent.mkdir(parents=True)
    broken.write_bytes(shard.read_bytes()[:200])
    result = run(job, "-i", tmp_path / "corpus", "-o", tmp_path / "out", "--workers", "1")
    assert result.exit_code == 2
    assert str(broken) in result.output and "Traceback" not in result.output
