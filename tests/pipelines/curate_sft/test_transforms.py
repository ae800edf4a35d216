"""curate-sft's stages on their own: what they count, under curate-sft's own metrics namespace."""

from tests.pipelines.prepare_rl.test_transforms import cpt_rows
from tests.pipelines.test_counting import counters, run_counted
from trajforge.pipelines.curate_sft.transforms import NAMESPACE, MakeQueries


def test_query_counters_are_reported_under_curate_sft(corpus_dir):
    rows = cpt_rows(corpus_dir)
    result, counted = run_counted(rows, MakeQueries(per_trajectory=2))
    assert NAMESPACE == "curate_sft"
    assert counters(result, "curate_sft") == counted
    skipped = sum(n for k, n in counted.items() if k.startswith("rows_skipped."))
    assert 0 < skipped < len(rows) and 0 < counted["read"] <= 2 * (len(rows) - skipped)
    assert counters(result, "build_corpus") == {}
