"""Evaluation as AgentWorldBench does it: on held-out trajectories (split by source trajectory), the first, the
last and three evenly spaced middle turns of each; a model predicts each observation; the five dimensions are
scored and normalised as (raw - 1) / 4 x 100, per domain and macro-averaged over domains, with the
rule-verifier accuracy beside them."""

from collections import defaultdict
from dataclasses import dataclass

from training.judge import DIMENSIONS, Scores, extract_prediction, judge_reference
from training.prompts import Query, build_query
from training.verifiers import derive_verifier, verify


def sample_turns(n: int) -> list[int]:
    """First, last and three uniform middle turns (all turns of a shorter trajectory)."""
    if n <= 5:
        return list(range(n))
    middle = [round(n * k / 4) for k in (1, 2, 3)]
    return sorted({0, *[min(max(m, 1), n - 2) for m in middle], n - 1})


def benchmark_queries(rows, plain: bool) -> list[tuple[Query, dict]]:
    """(query, the real observation's record) for the sampled turns of every row."""
    out = []
    for row in rows:
        for index in sample_turns(len(row["turns"])):
            out.append((build_query(row, index, plain=plain), row["turns"][index]["observation"]))
    return out


def prediction_of(answer: str) -> str:
    """The predicted observation: inside the tags when the model writes them (SFT/RL models), else the whole answer
    (a CPT model answers with the observation itself)."""
    extracted = extract_prediction(answer)
    return extracted if extracted is not None else answer


@dataclass
class Report:
    model: str
    per_domain: dict[str, dict[str, float]]
    macro: dict[str, float]
    verifier_accuracy: float | None
    samples: int
    heldout_loss: float | None = None  # next-observation loss per token, teacher-forced (checkpoints only)

    def as_dict(self) -> dict:
        return self.__dict__


def score(model_name: str, queries: list[tuple[Query, dict]], answers: list[str]) -> Report:
    by_domain: dict[str, list[Scores]] = defaultdict(list)
    verified: list[bool] = []
    for (query, observation), answer in zip(queries, answers, strict=True):
        prediction = prediction_of(answer)
        by_domain[query.domain].append(judge_reference(prediction, query.reference, query.history_text()))
        spec = derive_verifier(observation, query.domain)
        if spec is not None:
            verified.append(verify(spec, prediction))
    per_domain = {}
    for domain, scores in sorted(by_domain.items()):
        normalized = [s.normalized() for s in scores]
        dims = {d: sum(n[d] for n in normalized) / len(normalized) for d in DIMENSIONS}
        per_domain[domain] = {**dims, "overall": sum(dims.values()) / len(DIMENSIONS), "samples": len(scores)}
    keys = (*DIMENSIONS, "overall")
    macro = {k: sum(d[k] for d in per_domain.values()) / len(per_domain) for k in keys} if per_domain else {}
    accuracy = sum(verified) / len(verified) if verified else None
    return Report(model_name, per_domain, macro, accuracy, len(answers))
