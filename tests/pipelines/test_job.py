"""The three Beam jobs the way a cluster runs them: submitted to a job service whose workers live in a separate
worker pool process (Beam's portable protocol, what Flink and Spark job servers speak), and reading and writing
an S3-compatible object store (moto in server mode) through Beam's S3 filesystem. Shards and counts must be
byte-identical to the in-process runner's."""

import io
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
import datasets
import duckdb
import pyarrow as pa
import pytest

from tests.corpus_fixtures import corpus_trajectory
from trajforge.pipelines.build_corpus.config import BuildConfig
from trajforge.pipelines.build_corpus.pipeline import build_corpus
from trajforge.pipelines.curate_sft.pipeline import curate_sft
from trajforge.pipelines.prepare_rl.config import PrepareConfig
from trajforge.pipelines.prepare_rl.pipeline import prepare_rl
from trajforge.schemas.dataset import load_cpt
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.sinks import write_segments

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BUCKET = "trajforge-test"
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on {port}")


def start(argv: list[str], port: int, tmp: Path) -> subprocess.Popen:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    log = open(tmp / f"{Path(argv[0]).name}-{port}.log", "wb")  # noqa: SIM115 - kept open for the process
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    wait_for_port(port, proc)
    return proc


@pytest.fixture(scope="module")
def portable(tmp_path_factory):
    """A Beam job service and a worker pool, separate processes on 127.0.0.1: the Beam flags that reach them."""
    tmp = tmp_path_factory.mktemp("portable")
    job, pool = free_port(), free_port()
    service = start(
        [sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main", "--port", str(job)], job, tmp
    )
    workers = start(
        [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", f"--service_port={pool}"], pool, tmp
    )
    yield [
        "--runner=PortableRunner",
        f"--job_endpoint=localhost:{job}",
        "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{pool}",
    ]
    for proc in (workers, service):
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """moto's S3 server on 127.0.0.1 with one bucket; the Beam flags that point Beam's S3 filesystem at it."""
    tmp = tmp_path_factory.mktemp("moto")
    port = free_port()
    server = start([str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], port, tmp)
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
    )
    client.create_bucket(Bucket=BUCKET)
    flags = [
        f"--s3_endpoint_url={endpoint}",
        "--s3_access_key_id=test",
        "--s3_secret_access_key=test",
        "--s3_region_name=us-east-1",
    ]
    yield client, flags
    server.terminate()
    server.wait(timeout=30)


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The three jobs on the in-process runner, on local disk: what every other way must reproduce."""
    root = tmp_path_factory.mktemp("local")
    write_segments([corpus_trajectory(k) for k in range(12)] + [corpus_trajectory(3)], root / "raw", per_file=5)
    (root / "raw" / "segment-bad.jsonl").write_bytes(b'{"not": "a trajectory"}\n')
    build_corpus([str(root / "raw")], root / "corpus", BuildConfig(shard_bytes=3000), workers=1)
    curate_sft(root / "corpus", root / "sft", SFT_CONFIG, workers=1)
    prepare_rl(root / "corpus", root / "rl", RL_CONFIG, workers=1)
    return root


def _sft_config():
    from trajforge.evaluation.factory import JudgeSpec
    from trajforge.pipelines.curate_sft.config import CurateConfig
    from trajforge.training.generators import GeneratorSpec

    return CurateConfig(GeneratorSpec("rationalization", max_new_tokens=64), JudgeSpec())


SFT_CONFIG = _sft_config()
RL_CONFIG = PrepareConfig(token_budget=200, shard_bytes=3000)


def shard_bytes(folder: Path) -> dict[str, bytes]:
    manifest = read_manifest(folder)
    return {name: (folder / name).read_bytes() for name in manifest.outputs}


def s3_shard_bytes(client, prefix: str) -> dict[str, bytes]:
    manifest = read_manifest(f"s3://{BUCKET}/{prefix}")
    return {name: client.get_object(Bucket=BUCKET, Key=f"{prefix}/{name}")["Body"].read() for name in manifest.outputs}


def same_counts(a, b) -> bool:
    return a.counts == b.counts and a.outputs == b.outputs and a.reconciles()


def test_build_corpus_through_a_job_service_and_a_worker_pool(local, portable, tmp_path):
    manifest = build_corpus(
        [str(local / "raw")], tmp_path / "corpus", BuildConfig(shard_bytes=3000), beam_args=portable
    )
    assert same_counts(manifest, read_manifest(local / "corpus"))
    assert manifest.counts["rejected"] == 1 and manifest.counts["deduplicated.exact"] == 1
    assert shard_bytes(tmp_path / "corpus") == shard_bytes(local / "corpus")
    assert (tmp_path / "corpus" / "_rejections.jsonl").read_text().count("\n") == 1
    assert not (tmp_path / "corpus" / "_work").exists()


def test_s3_in_and_out_with_nothing_on_local_disk(local, s3, tmp_path, monkeypatch):
    client, flags = s3
    for path in sorted((local / "raw").glob("*.jsonl")):
        client.put_object(Bucket=BUCKET, Key=f"raw/{path.name}", Body=path.read_bytes())
    monkeypatch.chdir(tmp_path)
    manifest = build_corpus(
        [f"s3://{BUCKET}/raw"], f"s3://{BUCKET}/corpus", BuildConfig(shard_bytes=3000), beam_args=flags, workers=2
    )
    assert same_counts(manifest, read_manifest(local / "corpus"))
    assert s3_shard_bytes(client, "corpus") == shard_bytes(local / "corpus")
    rejections = client.get_object(Bucket=BUCKET, Key="corpus/_rejections.jsonl")["Body"].read()
    assert b"segment-bad.jsonl" in rejections
    keys = {o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix="corpus/")["Contents"]}
    assert not any("/_work/" in k or k.endswith(".tmp") for k in keys)
    assert list(tmp_path.iterdir()) == []  # no job file on local disk

    data = s3_shard_bytes(client, "corpus")
    first = next(iter(data.values()))
    ds = datasets.Dataset.from_buffer(first)
    shard = pa.ipc.open_stream(io.BytesIO(first)).read_all()  # noqa: F841 - duckdb reads it by name
    assert duckdb.sql("select count(*) from shard").fetchone()[0] == ds.num_rows > 0

    monkeypatch.setenv("TRAJFORGE_CACHE", str(tmp_path / "cache"))  # what `train --data s3://...` reads
    assert load_cpt(f"s3://{BUCKET}/corpus").num_rows == manifest.counts["written"]


def test_curate_sft_and_prepare_rl_on_pool_workers_with_data_only_in_s3(local, s3, portable, tmp_path, monkeypatch):
    client, flags = s3
    for path in sorted((local / "corpus" / "cpt").glob("*.arrow")):
        client.put_object(Bucket=BUCKET, Key=f"pool/corpus/cpt/{path.name}", Body=path.read_bytes())
    monkeypatch.chdir(tmp_path)
    corpus = f"s3://{BUCKET}/pool/corpus"
    sft = curate_sft(corpus, f"s3://{BUCKET}/pool/sft", SFT_CONFIG, beam_args=[*portable, *flags])
    rl = prepare_rl(corpus, f"s3://{BUCKET}/pool/rl", RL_CONFIG, beam_args=[*portable, *flags])
    assert same_counts(sft, read_manifest(local / "sft")) and sft.counts["written"] > 0
    assert same_counts(rl, read_manifest(local / "rl")) and rl.counts["written"] > 0
    assert s3_shard_bytes(client, "pool/sft") == shard_bytes(local / "sft")
    assert s3_shard_bytes(client, "pool/rl") == shard_bytes(local / "rl")
    scores = client.get_object(Bucket=BUCKET, Key="pool/sft/_scores.jsonl")["Body"].read()
    assert scores == (local / "sft" / "_scores.jsonl").read_bytes()
    assert list(tmp_path.iterdir()) == []
