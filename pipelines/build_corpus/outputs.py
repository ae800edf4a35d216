"""What build-corpus writes: CPT shards (the workers), then the rejection file, the filtered trajectories, the
duplicate pairs, the ids seen and, last, the manifest (the launcher, from the workers' small outputs)."""

import json

from trajforge.pipelines.counting import sum_counts
from trajforge.pipelines.job import finish_output, read_outputs, write_json_lines
from trajforge.pipelines.shard_writing import remove_stale_shards
from trajforge.schemas import counts, storage
from trajforge.schemas.manifest import Manifest, reason_key
from trajforge.schemas.names import CPT_DIR, DUPLICATES_NAME, FILTERED_NAME, REJECTIONS_NAME, SEEN_NAME


def read_seen(output: str) -> frozenset[str]:
    path = storage.join(output, SEEN_NAME)
    return frozenset(storage.read_text(path).split()) if storage.exists(path) else frozenset()


def finish(output: str, config: dict, inputs: dict[str, str], previous: dict | None) -> Manifest:
    """Reconcile what the workers wrote: the rejection file, the filtered trajectories, the duplicate pairs,
    the ids seen and, last, the manifest (a build is complete once it exists). With `previous` (an incremental
    build), counts, inputs, listed drops and shards add up over both builds."""
    saved = read_outputs(output)
    totals = sum_counts(saved.get("counts", []))
    if previous:
        for name, n in previous["counts"].items():
            totals[name] = totals.get(name, 0) + n
    rejected = sorted(saved.get("rejected", []), key=lambda r: (r["source"], r["locator"]))
    filtered = sorted(saved.get("filtered", []), key=lambda f: (f["source"], f["locator"]))
    pairs = sorted(saved.get("pairs", []), key=lambda p: (p["kind"], str(p["dropped"]), p["kept"]))
    if previous:
        rejected = _read_jsonl(storage.join(output, REJECTIONS_NAME)) + rejected
        filtered = _read_jsonl(storage.join(output, FILTERED_NAME)) + filtered
        pairs = _read_jsonl(storage.join(output, DUPLICATES_NAME)) + pairs
    write_json_lines(storage.join(output, REJECTIONS_NAME), rejected)
    write_json_lines(storage.join(output, FILTERED_NAME), filtered)
    write_json_lines(storage.join(output, DUPLICATES_NAME), pairs)
    seen = sorted((read_seen(output) if previous else frozenset()) | set(saved.get("ids", [])))
    storage.write_text(storage.join(output, SEEN_NAME), "".join(f"{ident}\n" for ident in seen))
    reasons: dict[str, int] = {}
    for entry in rejected:
        for reason in {reason_key(r) for r in entry["reasons"]}:
            reasons[reason] = reasons.get(reason, 0) + 1
    shards = [s["file"] for s in saved.get("shards", [])]
    manifest = Manifest(
        stage="build-corpus",
        config=config,
        inputs=sorted({*(previous["inputs"] if previous else []), *inputs}),
        fingerprints={**(previous.get("fingerprints", {}) if previous else {}), **inputs},
        outputs=sorted({*(previous["outputs"] if previous else []), *shards}),
        counts={counts.READ: 0, counts.WRITTEN: 0, counts.REJECTED: 0, **dict(sorted(totals.items()))},
        rejection_reasons=reasons,
    )
    manifest.write(output)
    remove_stale_shards(output, CPT_DIR, manifest.outputs)
    finish_output(output)
    return manifest


def _read_jsonl(path: str) -> list[dict]:
    if not storage.exists(path):
        return []
    return [json.loads(line) for line in storage.read_text(path).splitlines() if line.strip()]
