"""The commands around the Beam jobs take the same URLs: `collect --output s3://...` (two shards of one run, and a
resume), build-corpus from s3 to s3, then `inspect`, `report` and `eval --corpus` on the s3 corpus, each a fresh
process that finds the store only through the AWS environment (AWS_ENDPOINT_URL_S3), against moto's S3 server on
127.0.0.1. A damaged shard given to `eval --corpus` is one line naming it and exit code 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pipelines.test_job import BUCKET, free_port, s3  # noqa: F401 - s3: the moto server fixture
from trajforge.collectors.tasks import SUITES_DIR

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow


def trajforge(args: list[str], endpoint: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AWS_ENDPOINT_URL_S3": endpoint,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "TRAJFORGE_CACHE": str(cwd / "cache"),
    }
    argv = [sys.executable, "-m", "trajforge", *args]
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def keys(client, prefix: str) -> list[str]:
    return sorted(o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []))


def test_collect_build_inspect_report_and_eval_on_s3(s3, tmp_path, tiny_checkpoint):  # noqa: F811
    client, flags = s3
    endpoint = flags[0].split("=", 1)[1]
    suite = tmp_path / "kv.yaml"  # the bundled suite, its server on this machine: no Docker needed
    bundled = (SUITES_DIR / "mcp-kvstore.yaml").read_text()
    suite.write_text(bundled.replace("server: kvstore}", "server: kvstore, isolation: host}"))
    work = tmp_path / "work"
    work.mkdir()
    url = f"s3://{BUCKET}/urls"

    collect = ["collect", "--suite", str(suite), "--output", f"{url}/raw", "--policy", "scripted"]
    for shard in ("0/2", "1/2"):  # two machines of one run, each writing its own segments into the store
        done = trajforge([*collect, "--shard", shard], endpoint, work)
        assert done.returncode == 0, done.stdout + done.stderr
    raw = keys(client, "urls/raw/")
    runs = {k.split("/")[2] for k in raw}
    assert len(runs) == 2 and all(r.endswith(("shard0of2", "shard1of2")) for r in runs)
    assert sum(k.endswith("/_manifest.json") for k in raw) == 2
    assert sum("/segment-" in k for k in raw) >= 2 and not any(k.endswith(".tmp") for k in raw)
    collected = sum(
        json.loads(client.get_object(Bucket=BUCKET, Key=k)["Body"].read())["counts"]["written"]
        for k in raw
        if k.endswith("_manifest.json")
    )
    assert collected == 6  # the suite's six tasks, split over the two shards
    resumed = trajforge([*collect, "--shard", "0/2"], endpoint, work)  # resume: finds its episodes in the store
    said = resumed.stdout + resumed.stderr
    assert resumed.returncode == 0 and "0 episodes run, 2 already done" in said, said
    assert keys(client, "urls/raw/") == raw

    built = trajforge(
        ["build-corpus", "-i", f"{url}/raw", "-o", f"{url}/corpus", "--held-out", "0.3", "--workers", "1"],
        endpoint,
        work,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    manifest = json.loads(client.get_object(Bucket=BUCKET, Key="urls/corpus/_manifest.json")["Body"].read())
    written = manifest["counts"]["written"]
    assert written > 0 and manifest["counts"]["read"] == collected

    inspected = trajforge(["inspect", f"{url}/corpus", "--samples", "0"], endpoint, work)
    assert inspected.returncode == 0, inspected.stdout + inspected.stderr
    assert f"{written} valid records, 0 invalid" in inspected.stdout + inspected.stderr

    reported = trajforge(["report", f"{url}/corpus"], endpoint, work)
    assert reported.returncode == 0, reported.stdout + reported.stderr
    html = client.get_object(Bucket=BUCKET, Key="urls/corpus/report.html")["Body"].read().decode()
    assert "trajforge corpus report" in html and f"{len(manifest['outputs'])} shards" in html

    evaluated = trajforge(
        ["eval", "--world-model", str(tiny_checkpoint), "--corpus", f"{url}/corpus", "--limit", "2",
         "--max-new-tokens", "8", "--report", str(work / "eval.json")],
        endpoint,
        work,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    report, *baselines = json.loads((work / "eval.json").read_text())
    assert report["samples"] > 0 and report["heldout_loss"] > 0
    # the retrieval baseline read the training split from the store too
    assert [b["model"] for b in baselines] == ["copy previous (model-free)", "retrieval (model-free)"]

    shard = next(k for k in keys(client, "urls/corpus/cpt/") if k.endswith(".arrow"))
    damaged = client.get_object(Bucket=BUCKET, Key=shard)["Body"].read()[:120]
    client.put_object(Bucket=BUCKET, Key="urls/damaged/cpt/shard-damaged.arrow", Body=damaged)
    failed = trajforge(
        ["eval", "--world-model", str(tiny_checkpoint), "--corpus", f"{url}/damaged", "--limit", "2"], endpoint, work
    )
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert "shard-damaged.arrow" in failed.stdout + failed.stderr and "Traceback" not in failed.stderr
    # the job files stayed in the store: here only the cache and eval's own output (its JSON, the chart beside it)
    assert sorted(p.name for p in work.iterdir()) == ["cache", "eval.json", "eval.png"]


def test_an_unreachable_store_is_one_line_and_exit_2(tmp_path):
    port = free_port()  # nothing listens there
    suite = tmp_path / "kv.yaml"
    suite.write_text((SUITES_DIR / "mcp-kvstore.yaml").read_text().replace("kvstore}", "kvstore, isolation: host}"))
    for args in (
        ["inspect", "s3://b/corpus"],
        ["report", "s3://b/corpus"],
        ["collect", "-s", str(suite), "-o", "s3://b/r"],
    ):
        done = trajforge(args, f"http://127.0.0.1:{port}", tmp_path)
        said = done.stdout + done.stderr
        assert done.returncode == 2 and "does not answer for bucket 'b'" in said and "Traceback" not in said, said
