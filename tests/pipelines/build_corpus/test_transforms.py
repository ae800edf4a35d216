"""Each build-corpus stage on its own, in Beam's TestPipeline (seqio style: assert_that on the outputs)."""

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from curation.dedup import MinHashConfig
from curation.filters import FilterConfig
from masking import load_policy
from pipelines.build_corpus.transforms import (
    COUNTS,
    PAIRS,
    Annotate,
    DropDuplicates,
    ExactDuplicates,
    Filter,
    NearDuplicates,
    PredictabilityCombineFn,
    Redact,
)
from tests.conftest import make_trajectory, report_turns


def TestPipeline():  # noqa: N802 - reads like Beam's own
    """Beam's TestPipeline on the in-process runner (the DirectRunner would first look for Prism)."""
    return BeamTestPipeline(runner=FnApiRunner())


def sums(pcoll, label="Sum"):
    return pcoll | label >> beam.CombinePerKey(sum)


def test_exact_duplicates_keep_the_earliest_and_honour_seen_ids():
    a1 = make_trajectory(3, source={"kind": "collected", "by": "x", "run_id": "run-a"})
    a2 = make_trajectory(3, source={"kind": "collected", "by": "x", "run_id": "run-b"})
    old = make_trajectory(4)
    items = [("f:line 2", a2), ("f:line 1", a1), ("g:line 1", old), ("h:line 1", make_trajectory(5))]
    with TestPipeline() as p:
        out = p | beam.Create(items) | ExactDuplicates(seen=frozenset({old.trajectory_id}))
        assert_that(
            out.losers, equal_to([("f:line 2", a1.trajectory_id), ("g:line 1", old.trajectory_id)]), label="losers"
        )
        assert_that(out.ids, equal_to([a1.trajectory_id, make_trajectory(5).trajectory_id]), label="ids")
        assert_that(out[PAIRS] | beam.Map(lambda p: p["dropped"]), equal_to(["f:line 2", "g:line 1"]), label="pairs")


def report(tail: str, i: int):
    return make_trajectory(turns=report_turns(tail), task_description=f"task {i}")


def test_near_duplicates_drop_the_larger_id():
    x, y = report("done", 1), report("finished", 1)
    z = make_trajectory(2)
    keep, drop = sorted([x, y], key=lambda r: r.trajectory_id)
    with TestPipeline() as p:
        out = p | beam.Create([("a", x), ("b", y), ("c", z)]) | NearDuplicates(MinHashConfig())
        assert_that(out | beam.Map(lambda kv: (kv[0], kv[1][0])), equal_to([(drop.trajectory_id, keep.trajectory_id)]))


def test_drop_duplicates_uses_both_decisions():
    a, b, c = make_trajectory(2), make_trajectory(3), make_trajectory(4)
    with TestPipeline() as p:
        exact = p | "Exact" >> beam.Create([("f:line 2", "whatever")])
        near = p | "Near" >> beam.Create([(c.trajectory_id, (a.trajectory_id, 0.9))])
        out = p | beam.Create([("f:line 1", a), ("f:line 2", b), ("f:line 3", c)]) | DropDuplicates(exact, near)
        assert_that(out.records | beam.Map(lambda r: len(r.turns)), equal_to([2]), label="kept")
        assert_that(sums(out[COUNTS]), equal_to([("deduplicated.exact", 1), ("deduplicated.near", 1)]), label="counts")


def test_filter_and_redact_count_their_work():
    short = make_trajectory(1)
    secret = make_trajectory(
        turns=[
            {
                "index": i,
                "action": {"kind": "shell", "content": "env"},
                "observation": {"content": f"password={i}secret"},
            }
            for i in range(2)
        ]
    )
    with TestPipeline() as p:
        filtered = p | beam.Create([short, secret]) | Filter(FilterConfig())
        redacted = filtered.records | Redact()
        assert_that(sums(filtered[COUNTS], "SumF"), equal_to([("filtered.too_few_turns", 1)]), label="filtered")
        assert_that(sums(redacted[COUNTS], "SumR"), equal_to([("redacted.password", 2)]), label="redacted")
        assert_that(
            redacted.records | beam.Map(lambda r: r.turns[1].observation.content),
            equal_to(["password=<REDACTED:password>"]),
            label="text",
        )


def test_annotate_uses_the_corpus_wide_side_input():
    records = [make_trajectory(n) for n in (2, 3, 4)]
    policy = load_policy("information")
    with TestPipeline() as p:
        created = p | beam.Create(records)
        table = created | beam.Map(lambda r: ("x", r)) | beam.CombineGlobally(PredictabilityCombineFn())
        out = created | Annotate(policy, table)
        rows = out.rows | beam.Map(
            lambda row: (
                len(row["turns"]),
                row["turns"][0]["statistics"]["predictability"] > 0,
                row["masking_policy"].startswith("information@"),
            )
        )
        assert_that(rows, equal_to([(2, True, True), (3, True, True), (4, True, True)]), label="rows")
        assert_that(
            sums(out[COUNTS]) | beam.Filter(lambda kv: kv[0] in ("written", "turns_written")),
            equal_to([("written", 3), ("turns_written", 9)]),
            label="counts",
        )
