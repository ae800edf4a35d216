"""How the stages of every Beam job count what they do: twice, as Beam metrics under the job's own namespace (for
the runner's UI) and as ("name", n) elements on a COUNTS output, which the job sums into its manifest whatever
the runner. The names themselves are the manifest's, in schemas/counts.py."""

from collections import Counter
from collections.abc import Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

COUNTS = "counts"  # the tagged output of every counting stage


class CountingFn(beam.DoFn):
    """A stage's DoFn that counts what it does: a Beam metric per name, and (name, n) elements on the COUNTS
    output, both summed per bundle, so counting costs no element and no metric call per record.

    Each job subclasses it once with its metrics namespace, `class BuildCorpusFn(CountingFn,
    namespace="build_corpus")`, and its stages subclass that."""

    namespace = ""

    def __init_subclass__(cls, namespace: str = "", **kwargs):
        super().__init_subclass__(**kwargs)
        if namespace:
            cls.namespace = namespace
        if not cls.namespace:
            raise TypeError(f"{cls.__name__}: a CountingFn needs its job's metrics namespace")

    def start_bundle(self):
        self.counts: Counter = Counter()

    def count(self, name: str, n: int = 1) -> None:
        if n:
            self.counts[name] += n

    def finish_bundle(self) -> Iterator:
        for name, n in sorted(self.counts.items()):
            Metrics.counter(self.namespace, name).inc(n)
            yield beam.pvalue.TaggedOutput(COUNTS, WindowedValue((name, n), 0, [GlobalWindow()]))
        self.counts = Counter()


def sum_counts(counts) -> dict[str, int]:
    """(name, n) pairs, as the stages emit them, summed by name."""
    totals: dict[str, int] = {}
    for name, n in counts:
        totals[name] = totals.get(name, 0) + n
    return totals


class SumCounts(beam.PTransform):
    """Every stage's (name, n) counts, summed: what the manifest's counts come from."""

    def expand(self, counts):
        pcolls = counts if isinstance(counts, tuple) else (counts,)
        return pcolls | "All" >> beam.Flatten() | "Sum" >> beam.CombinePerKey(sum)
