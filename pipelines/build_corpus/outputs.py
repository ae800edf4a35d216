"""What build-corpus writes: CPT shards, and at the end the rejection file, the duplicate pairs and the manifest."""

import json
from pathlib import Path

from pipelines.shard_writing import sum_counts
from schemas.atomic import atomic_write
from schemas.manifest import MANIFEST_NAME, REJECTIONS_NAME, Manifest, reason_key

SHARDS_DIR = "cpt"
DUPLICATES_NAME = "_duplicates.jsonl"
SEEN_NAME = "_seen_ids.txt"  # content ids kept by exact dedup so far: what an incremental build dedups against


def read_seen(output: Path) -> frozenset[str]:
    path = output / SEEN_NAME
    return frozenset(path.read_text().split()) if path.exists() else frozenset()


def _write_jsonl(path: Path, entries: list[dict]) -> None:
    with atomic_write(path, "w") as f:
        for entry in entries:
            f.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")


def finish(
    _,
    output: str,
    config: dict,
    inputs: dict[str, str],
    previous: dict | None,
    counts: list[tuple[str, int]],
    shards: list[dict],
    rejected: list[dict],
    pairs: list[dict],
    kept_ids: list[str],
) -> dict:
    """Write the rejection file, the duplicate pairs and, last, the manifest (a build is complete once it exists).

    With `previous` (an incremental build), counts, inputs and shards add up over both builds."""
    out = Path(output)
    totals = sum_counts([*(previous["counts"].items() if previous else []), *counts])
    rejected = sorted(rejected, key=lambda r: (r["source"], r["locator"]))
    pairs = sorted(pairs, key=lambda p: (p["kind"], str(p["dropped"]), p["kept"]))
    if previous:
        rejected = _read_jsonl(out / REJECTIONS_NAME) + rejected
        pairs = _read_jsonl(out / DUPLICATES_NAME) + pairs
    _write_jsonl(out / REJECTIONS_NAME, rejected)
    _write_jsonl(out / DUPLICATES_NAME, pairs)
    seen = sorted((read_seen(out) if previous else frozenset()) | set(kept_ids))
    with atomic_write(out / SEEN_NAME, "w") as f:
        f.write("".join(f"{ident}\n" for ident in seen))
    reasons: dict[str, int] = {}
    for entry in rejected:
        for reason in {reason_key(r) for r in entry["reasons"]}:
            reasons[reason] = reasons.get(reason, 0) + 1
    outputs = sorted({*(previous["outputs"] if previous else []), *(s["file"] for s in shards)})
    manifest = Manifest(
        stage="build-corpus",
        config=config,
        inputs=sorted({*(previous["inputs"] if previous else []), *inputs}),
        fingerprints={**(previous.get("fingerprints", {}) if previous else {}), **inputs},
        outputs=outputs,
        counts={"read": 0, "written": 0, "rejected": 0, **dict(sorted(totals.items()))},
        rejection_reasons=reasons,
    )
    manifest.write(out)
    return manifest.model_dump(mode="json")


def _read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


__all__ = ["DUPLICATES_NAME", "MANIFEST_NAME", "REJECTIONS_NAME", "SHARDS_DIR", "finish"]
