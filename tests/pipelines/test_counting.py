"""Counting stages: Beam metrics under their job's own namespace, and the same counts as elements."""

import apache_beam as beam
import pytest
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from trajforge.pipelines.counting import COUNTS, CountingFn, SumCounts, sum_counts


def counters(result, namespace: str) -> dict[str, int]:
    """The committed Beam counters of a finished pipeline under NAMESPACE, by name."""
    found = result.metrics().query(MetricsFilter().with_namespace(namespace))["counters"]
    return {c.key.metric.name: c.committed for c in found}


_SUMMED: dict[str, int] = {}  # the in-process runner runs the pipeline in this process: a module-level sink


def _keep(count: tuple[str, int]) -> None:
    _SUMMED[count[0]] = count[1]


def run_counted(elements: list, transform: beam.PTransform):
    """TRANSFORM over ELEMENTS on the in-process runner: (the pipeline's result, its summed COUNTS output)."""
    _SUMMED.clear()
    p = beam.Pipeline(runner=FnApiRunner())
    counts = p | beam.Create(elements) | transform
    _ = counts[COUNTS] | SumCounts() | beam.Map(_keep)
    result = p.run()
    result.wait_until_finish()
    return result, dict(_SUMMED)


class _LengthFn(CountingFn, namespace="probe_job"):
    def process(self, word: str):
        self.count("words")
        self.count("letters", len(word))
        yield word


def test_metrics_and_elements_agree_under_the_jobs_namespace():
    result, counted = run_counted(["ab", "cde", ""], beam.ParDo(_LengthFn()).with_outputs(COUNTS, main="words"))
    assert counted == {"words": 3, "letters": 5}
    assert counters(result, "probe_job") == counted
    assert counters(result, "build_corpus") == {}


def test_a_counting_stage_without_a_namespace_is_refused():
    with pytest.raises(TypeError, match="namespace"):

        class _Nameless(CountingFn):
            pass


def test_sum_counts_adds_up_by_name():
    assert sum_counts([("a", 1), ("b", 2), ("a", 3)]) == {"a": 4, "b": 2}
