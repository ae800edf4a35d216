"""Each build-corpus stage on its own, in Beam's TestPipeline (seqio style: assert_that on the outputs)."""

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from tests.builders import make_trajectory, report_turns
from trajforge.curation.dedup import MinHashConfig
from trajforge.curation.filters import FilterConfig
from trajforge.masking import load_policy
from trajforge.pipelines.build_corpus.transforms import (
    FILTERED,
    PAIRS,
    Annotate,
    ExactDuplicates,
    FilesWithDrops,
    Filter,
    NearDuplicates,
    PredictabilityCombineFn,
    ReadRecords,
    Redact,
)
from trajforge.pipelines.counting import COUNTS


def TestPipeline():  # noqa: N802 - reads like Beam's own
    """Beam's TestPipeline on the in-process runner (the DirectRunner would first look for Prism)."""
    return BeamTestPipeline(runner=FnApiRunner())


def sums(pcoll, label="Sum"):
    return pcoll | label >> beam.CombinePerKey(sum)


def test_exact_duplicates_keep_the_earliest_and_honour_seen_ids():
    a1 = make_trajectory(3, source={"kind": "collected", "by": "x", "run_id": "run-a"})
    a2 = make_trajectory(3, source={"kind": "collected", "by": "x", "run_id": "run-b"})
    old = make_trajectory(4)
    items = [
        (("f", "line 2"), a2),
        (("f", "line 1"), a1),
        (("g", "line 1"), old),
        (("h", "line 1"), make_trajectory(5)),
    ]
    with TestPipeline() as p:
        out = p | beam.Create(items) | ExactDuplicates(["h", "g", "f"], seen=frozenset({old.trajectory_id}))
        assert_that(out.dropped, equal_to([(("f", "line 2"), "exact"), (("g", "line 1"), "exact")]), label="dropped")
        assert_that(out.ids, equal_to([a1.trajectory_id, make_trajectory(5).trajectory_id]), label="ids")
        assert_that(out[PAIRS] | beam.Map(lambda p: p["dropped"]), equal_to(["f:line 2", "g:line 1"]), label="pairs")


def test_among_exact_duplicates_of_one_run_the_first_file_by_path_then_by_locator_is_kept():
    a = make_trajectory(3)
    items = [(("b/2.jsonl", "line 1"), a), (("a/10.jsonl", "line 9"), a), (("a/10.jsonl", "line 8"), a)]
    with TestPipeline() as p:
        out = p | beam.Create(items) | ExactDuplicates(["b/2.jsonl", "a/10.jsonl"])
        assert_that(
            out.dropped,
            equal_to([(("b/2.jsonl", "line 1"), "exact"), (("a/10.jsonl", "line 9"), "exact")]),
            label="dropped",
        )


def report(tail: str, i: int):
    return make_trajectory(turns=report_turns(tail), task_description=f"task {i}")


def test_near_duplicates_drop_the_larger_id(tmp_path):
    x, y = report("done", 1), report("finished", 1)
    z = make_trajectory(2)
    keep, drop = sorted([x, y], key=lambda r: r.trajectory_id)
    with TestPipeline() as p:
        records = p | beam.Create([(("a", "line 1"), x), (("b", "line 1"), y), (("c", "line 1"), z)])
        out = records | NearDuplicates(MinHashConfig(), str(tmp_path))
        assert_that(out | beam.Map(lambda kv: (kv[0], kv[1][0])), equal_to([(drop.trajectory_id, keep.trajectory_id)]))
    assert len(list(tmp_path.glob("_work/signatures/*.npz"))) >= 1  # the tables went through files, not the runner


def test_decisions_reach_each_file_by_a_join_and_pass_2_drops_them(tmp_path):
    """Exact losers by location and near losers by id, joined with the files: each file reads with its own drops."""
    from trajforge.schemas.sinks import write_segments

    a, b, c = make_trajectory(2), make_trajectory(3), make_trajectory(4)
    (path,) = write_segments([a, a, b, c], tmp_path, per_file=10)
    other = write_segments([make_trajectory(5)], tmp_path / "other")[0]
    files = [str(path), str(other)]
    formats = dict.fromkeys(files, "trajforge")
    with TestPipeline() as p:
        features = p | "Pass1" >> beam.Create([(f, {}) for f in files]) | "Read1" >> ReadRecords(formats, 10**6, False)
        near = p | "Near" >> beam.Create([(c.trajectory_id, (b.trajectory_id, 0.9))])
        dedup = features.records | ExactDuplicates(files, near=near)
        drops = dedup.dropped | FilesWithDrops(files)
        assert_that(
            drops, equal_to([(str(path), {"line 2": "exact", "line 4": "near"}), (str(other), {})]), label="drops"
        )
        read = drops | "Read2" >> ReadRecords(formats, 10**6, True)
        assert_that(
            read.records | beam.Map(lambda kv: kv[0][1]), equal_to(["line 1", "line 3", "line 1"]), label="kept"
        )
        assert_that(
            sums(read[COUNTS]), equal_to([("read", 5), ("deduplicated.exact", 1), ("deduplicated.near", 1)]), label="n"
        )


def test_a_datasets_files_are_a_source_read_streaming_row_by_row(tmp_path):
    """ReadRecords over a Hugging Face dataset's parquet files (a file a bundle, its rows streamed): the records
    of the rows, each where it came from, and the bad rows rejected with their file, row and reasons."""
    from tests.builders import dataset_chat_rows, write_dataset
    from trajforge.schemas.sources import read_records

    files = [str(f) for f in write_dataset(dataset_chat_rows(200), tmp_path, files=2)]
    expected = [((r.source, r.locator), r.record.trajectory_id) for r in read_records(files, "chat") if r.ok]
    with TestPipeline() as p:
        read = p | beam.Create([(f, {}) for f in files]) | ReadRecords(dict.fromkeys(files, "chat"), 10**6, True)
        assert_that(read.records | beam.MapTuple(lambda at, r: (at, r.trajectory_id)), equal_to(expected))
        assert_that(
            read["rejected"] | beam.Map(lambda r: (r["source"][-28:], r["locator"], r["reasons"][0][:11])),
            equal_to(
                [("train-00000-of-00002.parquet", f"row {i}", "messages[1]") for i in (7, 30, 57)]
                + [("train-00001-of-00002.parquet", f"row {i}", "messages[1]") for i in (7, 57)]
            ),
            label="rejected",
        )
        assert_that(sums(read[COUNTS]), equal_to([("read", 200), ("rejected", 5)]), label="counts")


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
        filtered = p | beam.Create([(("f", "line 1"), short), (("f", "line 2"), secret)]) | Filter(FilterConfig())
        redacted = filtered.records | Redact()
        assert_that(sums(filtered[COUNTS], "SumF"), equal_to([("filtered.min_turns", 1)]), label="filtered")
        assert_that(
            filtered[FILTERED] | beam.Map(lambda f: (f["locator"], f["reason"])),
            equal_to([("line 1", "min_turns")]),
            label="listed",
        )
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
