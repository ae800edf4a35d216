"""Each build-corpus stage on its own, in Beam's TestPipeline (seqio style: assert_that on the outputs)."""

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from curation.dedup import MinHashConfig
from curation.filters import FilterConfig
from masking import load_policy
from pipelines.build_corpus.transforms import COUNTS, PAIRS, Annotate, ExactDedup, Filter, NearDedup, Redact
from tests.conftest import make_trajectory


def TestPipeline():  # noqa: N802 - reads like Beam's own
    """Beam's TestPipeline on the in-process runner (the DirectRunner would first look for Prism)."""
    return BeamTestPipeline(runner=FnApiRunner())


def sums(pcoll, label="Sum"):
    return pcoll | label >> beam.CombinePerKey(sum)


def test_exact_dedup_keeps_one_and_reports_the_pair():
    a1 = make_trajectory(3, source={"kind": "collected", "by": "x", "run_id": "run-a"})
    a2 = make_trajectory(3, source={"kind": "collected", "by": "x", "run_id": "run-b", "origin": "b#0"})
    other = make_trajectory(4)
    with TestPipeline() as p:
        out = p | beam.Create([a2, other, a1]) | ExactDedup()
        assert_that(out.records | beam.Map(lambda r: r.source.run_id), equal_to(["run-a", "run-1"]), label="kept")
        assert_that(sums(out[COUNTS]), equal_to([("deduplicated.exact", 1)]), label="counts")
        assert_that(
            out[PAIRS] | beam.Map(lambda p: (p["dropped"], p["kept"])),
            equal_to([("b#0", a1.trajectory_id)]),
            label="pairs",
        )


def near(i: int, tail: str):
    turns = [
        {
            "index": j,
            "action": {"kind": "shell", "content": f"grep -n total report{j}.csv"},
            "observation": {"content": f"{j}: total revenue for region {j} was recorded in the ledger"},
        }
        for j in range(16)
    ]
    turns[-1]["observation"]["content"] = tail
    return make_trajectory(turns=turns, task_description=f"task {i}")


def test_near_dedup_drops_the_larger_id():
    x, y = near(1, "done"), near(1, "finished")
    z = make_trajectory(2)
    keep, drop = sorted([x, y], key=lambda r: r.trajectory_id)
    with TestPipeline() as p:
        out = p | beam.Create([x, y, z]) | NearDedup(MinHashConfig())
        assert_that(
            out.records | beam.Map(lambda r: r.trajectory_id),
            equal_to([keep.trajectory_id, z.trajectory_id]),
            label="kept",
        )
        assert_that(
            out[PAIRS] | beam.Map(lambda p: (p["dropped"], p["kept"])),
            equal_to([(drop.trajectory_id, keep.trajectory_id)]),
            label="pairs",
        )


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
        out = p | beam.Create(records) | Annotate(policy)
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
