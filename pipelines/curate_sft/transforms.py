"""curate-sft stages: one small labelled PTransform each, counting what they do."""

from collections.abc import Iterator

import apache_beam as beam

from trajforge.evaluation.extraction import extract_prediction
from trajforge.evaluation.scores import Scores
from trajforge.evaluation.turns import PredictionTurn, corpus_turn
from trajforge.pipelines.counting import COUNTS, CountingFn
from trajforge.schemas import counts
from trajforge.schemas.splits import readable_by, row_placement
from trajforge.schemas.version import SCHEMA_VERSION
from trajforge.training.generators import Candidate, sample_kind

NAMESPACE = "curate_sft"  # of its Beam metrics
SCORES = "scores"


class CurateFn(CountingFn, namespace=NAMESPACE):
    """A curate-sft stage that counts what it does."""


class MakeQueries(beam.PTransform):
    """In-loss turns (the ones worth teaching) -> (query with its history, its row's task and split), at most
    `per_trajectory` each, spread evenly over the trajectory. Rows SFT may not read (held out, or in the CPT-only
    pool) make no query: counted as `rows_skipped.<split>`."""

    def __init__(self, per_trajectory: int):
        super().__init__()
        self.per_trajectory = per_trajectory

    def expand(self, rows):
        return rows | "Queries" >> beam.ParDo(_QueriesFn(self.per_trajectory)).with_outputs(COUNTS, main="queries")


class _QueriesFn(CurateFn):
    def __init__(self, per_trajectory: int):
        self.per_trajectory = per_trajectory

    def process(self, row: dict) -> Iterator[tuple[PredictionTurn, dict]]:
        task, split = row_placement(row)
        if not readable_by(split, "sft"):
            self.count(counts.key(counts.ROWS_SKIPPED, split))
            return
        turns = [t["index"] for t in row["turns"] if t["in_loss"]]
        if len(turns) > self.per_trajectory:
            step = len(turns) / self.per_trajectory
            turns = [turns[int(i * step)] for i in range(self.per_trajectory)]
        for index in turns:
            self.count(counts.READ)
            yield corpus_turn(row, index), {"task": task, "split": split}


class Generate(beam.PTransform):
    """N candidates per query from the generator that `make_generator` builds once per worker, each labelled
    with where it came from (a model rollout, or rationalization toward the known observation)."""

    def __init__(self, make_generator, candidates: int, hint: bool, seed: int):
        super().__init__()
        self.make_generator, self.candidates, self.hint, self.seed = make_generator, candidates, hint, seed

    def expand(self, queries):
        return queries | "Generate" >> beam.ParDo(
            _GenerateFn(self.make_generator, self.candidates, self.hint, self.seed)
        )


class _GenerateFn(beam.DoFn):
    def __init__(self, make_generator, candidates: int, hint: bool, seed: int):
        self.make_generator, self.candidates, self.hint, self.seed = make_generator, candidates, hint, seed

    def setup(self):
        self.generator = self.make_generator()

    def process(self, item: tuple[PredictionTurn, dict]) -> Iterator[tuple[PredictionTurn, dict, list[Candidate], str]]:
        query, placement = item
        seed = self.seed + query.turn_index * 1009 + int(query.trajectory_id[:6], 16)
        labelled = self.generator.labelled(query, self.candidates, seed, self.hint)
        yield query, placement, labelled, self.generator.name


class JudgeAndPick(beam.PTransform):
    """Every candidate judged on the five dimensions; the best, if its mean reaches `threshold`, becomes an SFT
    row. Every query's scores go to the scores output, kept or not."""

    def __init__(self, make_judge, threshold: float):
        super().__init__()
        self.make_judge, self.threshold = make_judge, threshold

    def expand(self, generated):
        return generated | "Judge" >> beam.ParDo(_JudgeFn(self.make_judge, self.threshold)).with_outputs(
            COUNTS, SCORES, main="rows"
        )


class _JudgeFn(CurateFn):
    def __init__(self, make_judge, threshold: float):
        self.make_judge, self.threshold = make_judge, threshold

    def setup(self):
        self.judge = self.make_judge()

    def process(self, item) -> Iterator:
        query, placement, labelled, generator = item
        candidates = [c.text for c in labelled]
        predictions = [extract_prediction(candidate) for candidate in candidates]
        judged = []  # a judge failure (an unparseable answer, a timeout) scores lowest, so best-of-N passes it over
        for prediction in predictions:
            judgement = self.judge.judge(query, prediction.text)
            if not judgement.ok:
                self.count(counts.JUDGE_FAILURES)
            judged.append((judgement.scores or Scores.lowest(), prediction))
        best_index = max(range(len(judged)), key=lambda i: (judged[i][1].tagged, judged[i][0].mean, -i))
        best, prediction = judged[best_index]
        target = candidates[best_index]
        keep = best.mean >= self.threshold and prediction.tagged  # SFT teaches the tagged answer format
        yield beam.pvalue.TaggedOutput(
            SCORES,
            {
                "trajectory_id": query.trajectory_id,
                "turn_index": query.turn_index,
                "kept": keep,
                "best": best_index,
                "origins": [c.origin for c in labelled],
                "kept_from": sample_kind(labelled[best_index].origin) if keep else None,
                "scores": [s.as_dict() for s, _ in judged],
                "means": [round(s.mean, 4) for s, _ in judged],
            },
        )
        if not keep:
            self.count(counts.key(counts.FILTERED, counts.BELOW_THRESHOLD))
            return
        origin = labelled[best_index].origin
        self.count(counts.WRITTEN)
        self.count(counts.key(counts.KEPT, sample_kind(origin)))
        self.count(counts.key(counts.KEPT, counts.VERBATIM_REFERENCE), int(prediction.text == query.reference))
        yield {
            "schema_version": SCHEMA_VERSION,
            "trajectory_id": query.trajectory_id,
            "turn_index": query.turn_index,
            "domain": query.domain,
            "template": query.template,
            "messages": [{"role": r, "content": c} for r, c in query.messages],
            "target": target,
            "prediction": prediction.text,
            "reference": query.reference,
            "scores": best.as_dict(),
            "score": best.mean,
            "candidates": len(candidates),
            "generator": generator,
            "judge": self.judge.name,
            "origin": origin,
            **placement,
        }
