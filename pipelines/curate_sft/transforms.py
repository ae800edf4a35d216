"""curate-sft stages: one small labelled PTransform each, counting what they do."""

from collections.abc import Iterator

import apache_beam as beam

from pipelines.build_corpus.transforms import COUNTS, CountingFn
from schemas.version import SCHEMA_VERSION
from training.judge import (
    JUDGE_PROMPT,
    PAIRWISE_PROMPT,
    Scores,
    extract_prediction,
    judge_reference,
    parse_judge_answer,
)
from training.prompts import Query, build_query

SCORES = "scores"
PAIRWISE_MARGIN = 0.5  # mean scores this close are compared pairwise when the judge can


class MakeQueries(beam.PTransform):
    """In-loss turns (the ones worth teaching) -> queries with their history, at most `per_trajectory` each,
    spread evenly over the trajectory."""

    def __init__(self, per_trajectory: int):
        super().__init__()
        self.per_trajectory = per_trajectory

    def expand(self, rows):
        return rows | "Queries" >> beam.ParDo(_QueriesFn(self.per_trajectory)).with_outputs(COUNTS, main="queries")


class _QueriesFn(CountingFn):
    def __init__(self, per_trajectory: int):
        self.per_trajectory = per_trajectory

    def process(self, row: dict) -> Iterator[Query]:
        turns = [t["index"] for t in row["turns"] if t["in_loss"]]
        if len(turns) > self.per_trajectory:
            step = len(turns) / self.per_trajectory
            turns = [turns[int(i * step)] for i in range(self.per_trajectory)]
        for index in turns:
            self.count("read")
            yield build_query(row, index)


class Generate(beam.PTransform):
    """N candidates per query from the generator that `make_generator` builds once per worker."""

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

    def process(self, query: Query) -> Iterator[tuple[Query, list[str], str]]:
        seed = self.seed + query.turn_index * 1009 + int(query.trajectory_id[:6], 16)
        yield query, self.generator.generate(query, self.candidates, seed, self.hint), self.generator.name


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


class _JudgeFn(CountingFn):
    def __init__(self, make_judge, threshold: float):
        self.make_judge, self.threshold = make_judge, threshold

    def setup(self):
        self.judge = self.make_judge()

    def process(self, item) -> Iterator:
        query, candidates, generator = item
        judged = [(self.judge.score(query, candidate), candidate) for candidate in candidates]
        best_index = max(range(len(judged)), key=lambda i: (judged[i][0].mean, -i))
        if hasattr(self.judge, "prefer"):  # an LLM judge settles close calls by comparing the two directly
            ranked = sorted(range(len(judged)), key=lambda i: (-judged[i][0].mean, i))
            if len(ranked) > 1 and judged[ranked[0]][0].mean - judged[ranked[1]][0].mean <= PAIRWISE_MARGIN:
                best_index = self.judge.prefer(query, candidates[ranked[0]], candidates[ranked[1]], ranked[:2])
        best, target = judged[best_index]
        keep = best.mean >= self.threshold and extract_prediction(target) is not None
        yield beam.pvalue.TaggedOutput(
            SCORES,
            {
                "trajectory_id": query.trajectory_id,
                "turn_index": query.turn_index,
                "kept": keep,
                "best": best_index,
                "scores": [s.as_dict() for s, _ in judged],
                "means": [round(s.mean, 4) for s, _ in judged],
            },
        )
        if not keep:
            self.count("filtered.below_threshold")
            return
        self.count("written")
        yield {
            "schema_version": SCHEMA_VERSION,
            "trajectory_id": query.trajectory_id,
            "turn_index": query.turn_index,
            "domain": query.domain,
            "template": query.template,
            "messages": [{"role": r, "content": c} for r, c in query.messages],
            "target": target,
            "prediction": extract_prediction(target),
            "reference": query.reference,
            "scores": best.as_dict(),
            "score": best.mean,
            "candidates": len(candidates),
            "generator": generator,
            "judge": self.judge.name,
        }


class ReferenceJudge:
    name = "reference"

    def score(self, query: Query, candidate: str) -> Scores:
        return judge_reference(extract_prediction(candidate), query.reference, query.history_text())


class EndpointJudge:
    """An LLM judge behind an OpenAI-compatible endpoint; an answer that does not parse scores 1 everywhere."""

    def __init__(self, base_url: str, model: str):
        from training.generators import EndpointGenerator

        self.client = EndpointGenerator(base_url, model, temperature=0.0, max_tokens=200)
        self.name = f"endpoint:{model}"

    def score(self, query: Query, candidate: str) -> Scores:
        prediction = extract_prediction(candidate)
        if prediction is None:
            return Scores(1, 1, 1, 1, 1)
        prompt = JUDGE_PROMPT.format(
            history=query.history_text(), action=query.action, reference=query.reference, prediction=prediction
        )
        answer = self.client.complete([{"role": "user", "content": prompt}], seed=0)[0]
        return parse_judge_answer(answer) or Scores(1, 1, 1, 1, 1)

    def prefer(self, query: Query, first: str, second: str, indices: list[int]) -> int:
        """Pairwise: which of two candidates is closer to the real observation (the first on an unclear answer)."""
        prompt = PAIRWISE_PROMPT.format(
            action=query.action, reference=query.reference, a=extract_prediction(first), b=extract_prediction(second)
        )
        answer = self.client.complete([{"role": "user", "content": prompt}], seed=0)[0].strip().upper()
        return indices[1] if answer.startswith("B") else indices[0]
