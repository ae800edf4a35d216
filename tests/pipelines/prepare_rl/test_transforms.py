"""prepare-rl's stages on their own: what Prompts counts, under prepare-rl's own metrics namespace."""

from tests.pipelines.test_counting import counters, run_counted
from trajforge.pipelines.prepare_rl.transforms import NAMESPACE, Prompts
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.shards import read_shard_table


def cpt_rows(corpus_dir) -> list[dict]:
    return [r for s in read_manifest(corpus_dir).outputs for r in read_shard_table(corpus_dir / s).to_pylist()]


def test_prompt_counters_are_reported_under_prepare_rl(corpus_dir):
    rows = cpt_rows(corpus_dir)
    result, counted = run_counted(rows, Prompts(token_budget=120, tokenizer=None))
    assert NAMESPACE == "prepare_rl"
    assert counters(result, "prepare_rl") == counted
    assert counted["read"] == len(rows) and 0 < counted["written"] < len(rows)  # the held-out rows are filtered
    assert counted["read"] == counted["written"] + sum(n for k, n in counted.items() if k.startswith("filtered."))
    assert counters(result, "build_corpus") == {}
