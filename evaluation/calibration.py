"""Judge calibration: for sampled turns of a corpus, the real observation against adversarial candidates (see
`adversaries`), judged by any judge; pairwise accuracy (how often the real observation scores higher) per
adversary kind and overall, and the pairs themselves for inspection."""

import json
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from trajforge.evaluation.adversaries import KINDS, CalibrationTurn, adversaries
from trajforge.evaluation.benchmark import sample_turns
from trajforge.evaluation.judge import Judge
from trajforge.evaluation.turns import PredictionTurn, corpus_turn

CURATION_THRESHOLD = 3.5


def corpus_turns(rows: Iterable[dict]) -> list[CalibrationTurn]:
    """The benchmark's sampled turns of every trajectory, with their whole history, each with the observations of
    the same kind (domain and format) from other trajectories, for the `other_trajectory` adversary."""
    picked: list[tuple[tuple[str, str], PredictionTurn]] = []
    pool: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for row in rows:
        for index in sample_turns(len(row["turns"])):
            turn = corpus_turn(row, index, plain=True, max_history_chars=math.inf)
            kind = (turn.domain, turn.observation.get("format") or "text")
            pool[kind].append((turn.trajectory_id, turn.reference))
            picked.append((kind, turn))
    out = []
    for kind, turn in picked:
        others = tuple(dict.fromkeys(o for t, o in pool[kind] if t != turn.trajectory_id))[:50]
        out.append(CalibrationTurn(**vars(turn), others=others))
    return out


@dataclass
class KindResult:
    pairs: int = 0
    correct: int = 0
    below_threshold: int = 0  # adversaries whose mean score is under the curation threshold
    adversary_mean: float = 0.0
    failed: int = 0  # pairs where the judge gave no scores

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.pairs if self.pairs else None


@dataclass
class Calibration:
    judge: str
    turns: int
    kinds: dict[str, KindResult] = field(default_factory=dict)

    @property
    def overall(self) -> KindResult:
        total = KindResult()
        for r in self.kinds.values():
            total.pairs += r.pairs
            total.correct += r.correct
            total.below_threshold += r.below_threshold
            total.failed += r.failed
            total.adversary_mean += r.adversary_mean * r.pairs
        total.adversary_mean = total.adversary_mean / total.pairs if total.pairs else 0.0
        return total

    def as_dict(self) -> dict:
        def row(r: KindResult) -> dict:
            return {**r.__dict__, "accuracy": r.accuracy}

        return {
            "judge": self.judge,
            "turns": self.turns,
            "kinds": {k: row(r) for k, r in self.kinds.items()},
            "overall": row(self.overall),
        }


def calibrate(turns: list[CalibrationTurn], judge: Judge, seed: int = 0, pairs_out=None, progress=None) -> Calibration:
    """Judge the real observation and every adversary of each turn; write each pair as a JSON line to
    `pairs_out` (a text file) when given."""
    rng = random.Random(seed)
    result = Calibration(judge.label, len(turns), {kind: KindResult() for kind in KINDS})
    for turn in progress(turns) if progress else turns:
        real = judge.judge(turn, turn.reference)
        for kind, candidate in adversaries(turn, rng).items():
            adversary = judge.judge(turn, candidate)
            r = result.kinds[kind]
            if not (real.ok and adversary.ok):
                r.failed += 1
                continue
            correct = real.scores.mean > adversary.scores.mean
            r.adversary_mean = (r.adversary_mean * r.pairs + adversary.scores.mean) / (r.pairs + 1)
            r.pairs += 1
            r.correct += correct
            r.below_threshold += adversary.scores.mean < CURATION_THRESHOLD
            if pairs_out is not None:
                pairs_out.write(json.dumps(_pair(turn, kind, candidate, real, adversary, correct)) + "\n")
    return result


def _pair(turn: CalibrationTurn, kind: str, candidate: str, real, adversary, correct: bool) -> dict:
    return {
        "domain": turn.domain,
        "kind": kind,
        "action": turn.action,
        "real": turn.reference,
        "adversary": candidate,
        "real_scores": real.scores.as_dict(),
        "adversary_scores": adversary.scores.as_dict(),
        "real_mean": round(real.scores.mean, 3),
        "adversary_mean": round(adversary.scores.mean, 3),
        "correct": correct,
    }


def table_rows(calibration: Calibration) -> Iterator[tuple[str, str, str, str, str]]:
    """(kind, pairs, pairwise accuracy %, adversary mean score, adversaries below 3.5 %) for a table."""
    for kind, r in [*calibration.kinds.items(), ("overall", calibration.overall)]:
        if not r.pairs:
            yield kind, "0", "-", "-", "-"
            continue
        yield (
            kind,
            str(r.pairs),
            f"{100 * r.accuracy:.1f}",
            f"{r.adversary_mean:.2f}",
            f"{100 * r.below_threshold / r.pairs:.1f}",
        )


def calibrate_corpus(
    corpus, make_judge, limit: int | None = None, seed: int = 0, pairs_path=None, progress=None
) -> Calibration:
    """`calibrate` over a build-corpus folder's CPT shards (the first `limit` trajectories), with the judge
    `make_judge` builds; every pair goes to `pairs_path` as JSON Lines when one is given. A corpus that is not
    there raises FileNotFoundError. `progress(items, total)` wraps the judging loop."""
    from trajforge.schemas.dataset import load_cpt

    rows = load_cpt(corpus)
    rows = rows.select(range(min(limit, len(rows)))) if limit else rows
    turns = corpus_turns(rows)
    judge = make_judge()
    track = (lambda xs: progress(xs, len(turns))) if progress else None
    if pairs_path is None:
        return calibrate(turns, judge, seed, None, track)
    with open(pairs_path, "w") as sink:
        return calibrate(turns, judge, seed, sink, track)
