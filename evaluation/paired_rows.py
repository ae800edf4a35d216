"""Rows of one eval run compared turn by turn: each stage against the stage before it (CPT --no-mask against CPT,
its ablation), and every model against the model-free baselines, by the paired difference over the turns both
rows have scores on (`evaluation.paired`), the turns of one episode one cluster of its interval. A reading says
"no difference shown" where the 95% interval holds zero; two unpaired means side by side are never read."""

from collections.abc import Sequence
from dataclasses import dataclass

from trajforge.evaluation.baselines import BASELINES
from trajforge.evaluation.benchmark import Report
from trajforge.evaluation.paired import PairedDifference, paired_difference

STAGE_ORDER = ("untrained", "cpt", "sft", "rl")  # each stage trains from the one before it
ABLATIONS = {"cpt --no-mask": "cpt"}  # a stage compared with the one it ablates
MEASURES = {"overall": ("overall", 1.0), "factuality": ("factuality", 1.0), "format compliance": ("tagged", 100.0)}


@dataclass(frozen=True)
class RowComparison:
    """Row `row` minus row `against` on `measure`, paired over the turns both scored."""

    row: str
    against: str
    measure: str
    difference: PairedDifference
    clusters: int  # episodes (or single turns) the interval resamples

    @property
    def verdict(self) -> str:
        if self.difference.low > 0:
            return f"higher than {self.against}"
        if self.difference.high < 0:
            return f"LOWER than {self.against}"
        return "no difference shown"

    def describe(self) -> str:
        """e.g. "-3.5 points [-9.0, +2.1] (paired, 36 turns in 12 episodes)"."""
        n = self.difference.n
        of = f"turns in {self.clusters} episodes" if self.clusters < n else "turns"
        return self.difference.describe(MEASURES[self.measure][1], "points", of)

    def sentence(self) -> str:
        return f"{self.row} vs {self.against}, {self.measure}: {self.describe()}: {self.verdict}."

    def as_dict(self) -> dict:
        scale, d = MEASURES[self.measure][1], self.difference
        return {
            "row": self.row,
            "against": self.against,
            "measure": self.measure,
            "turns": d.n,
            "clusters": self.clusters,
            "mean": scale * d.mean_b,
            "mean_against": scale * d.mean_a,
            "difference": scale * d.difference,
            "low": scale * d.low,
            "high": scale * d.high,
            "confidence": d.confidence,
            "method": d.method,
            "verdict": self.verdict,
        }


def compare(against: tuple[str, Report], row: tuple[str, Report], measure: str) -> RowComparison | None:
    """(label, report) pairs; None when the two rows share no scored turn."""
    key = MEASURES[measure][0]
    (a_label, a), (b_label, b) = against, row
    shared = [t for t, values in b.per_turn.items() if key in values and key in a.per_turn.get(t, {})]
    if not shared:
        return None
    clusters = [b.per_turn[t]["cluster"] for t in shared]
    difference = paired_difference([a.per_turn[t][key] for t in shared], [b.per_turn[t][key] for t in shared], clusters)
    return RowComparison(b_label, a_label, measure, difference, len(set(clusters)))


def row_label(report: Report, stage: str | None) -> str:
    return stage or report.model


def _before(stage: str | None, present: dict[str, Report]) -> str | None:
    if stage in ABLATIONS:
        return ABLATIONS[stage] if ABLATIONS[stage] in present else None
    if stage not in STAGE_ORDER:
        return None
    earlier = STAGE_ORDER[: STAGE_ORDER.index(stage)]
    return next((s for s in reversed(earlier) if s in present), None)


def row_comparisons(reports: Sequence[Report], stages: Sequence[str | None]) -> list[RowComparison]:
    """Each stage against the one before it on the overall (SFT on format compliance too), then every model
    against each baseline on factuality."""
    present = {stage: report for report, stage in zip(reports, stages, strict=True) if stage}
    baselines = [r for r in reports if r.model in BASELINES]
    found = []
    for report, stage in zip(reports, stages, strict=True):
        label, before = row_label(report, stage), _before(stage, present)
        if before is not None:
            for measure in ("overall", "format compliance") if stage == "sft" else ("overall",):
                found.append(compare((before, present[before]), (label, report), measure))
        if report.model not in BASELINES:
            found.extend(compare((b.model, b), (label, report), "factuality") for b in baselines)
    return [c for c in found if c is not None]


def shared_turns(reports: Sequence[Report], labels: Sequence[str]) -> str:
    """Whether every row was scored on the same turns, in words (a row's judge may fail on some)."""
    sets = [r.turns_scored() for r in reports]
    if all(s == sets[0] for s in sets):
        clusters = {reports[0].per_turn[t]["cluster"] for t in sets[0]}
        episodes = f" in {len(clusters)} episodes" if len(clusters) < len(sets[0]) else ""
        return f"every row scored on the same {len(sets[0])} turns{episodes}"
    counts = ", ".join(f"{label} {len(s)}" for label, s in zip(labels, sets, strict=True))
    return (
        f"rows scored on DIFFERENT turns (a judge failed on some: {counts}); each comparison uses only the turns "
        "both of its rows have"
    )


def baseline_reading(comparisons: Sequence[RowComparison]) -> list[str]:
    """A sentence for each model against each model-free baseline, on factuality: a world model worth simulating
    in beats both on facts."""
    return [c.sentence() for c in comparisons if c.against in BASELINES and c.measure == "factuality"]
