"""Benchmark sampling and scoring, as AgentWorldBench does it. Corpus trajectories are sampled at the first, the
last and three evenly spaced middle turns; a benchmark line is scored at its own turn. Every answer goes through
the one extractor, then the judge; scores are normalised as (raw - 1) / 4 x 100. An answer-less line or a judge
failure is excluded from the averages and counted, never scored as zero. Two overall figures: pooled (every line
once) and equal-weight over domains. Every report names its judge."""

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from trajforge.evaluation.extraction import extract_prediction
from trajforge.evaluation.judge import NOT_COMPARABLE, Judge
from trajforge.evaluation.scores import DIMENSIONS
from trajforge.evaluation.turns import PredictionTurn, corpus_turn
from trajforge.evaluation.verifiers import derive_verifier, verify
from trajforge.schemas.formats.agentworldbench import current_action, ground_truth, subtask


def sample_turns(n: int) -> list[int]:
    """First, last and three uniform middle turns (all turns of a shorter trajectory)."""
    if n <= 5:
        return list(range(n))
    middle = [round(n * k / 4) for k in (1, 2, 3)]
    return sorted({0, *[min(max(m, 1), n - 2) for m in middle], n - 1})


def sampled_turns(rows: Iterable[dict], plain: bool) -> list[PredictionTurn]:
    """The sampled turns of corpus rows, asked in trajforge's own chat format, which is how trajforge's models were
    trained (`plain`: the system prompt as CPT renders it, no reasoning template)."""
    return [corpus_turn(row, index, plain=plain) for row in rows for index in sample_turns(len(row["turns"]))]


def line_turn(line: dict, where: str) -> PredictionTurn:
    """The one turn a benchmark line asks for (`turn_idx`), prompted exactly as the benchmark's evaluator prompts:
    the line's `system_str`, one user/assistant pair per earlier turn with the `prompt[i]`/`response[i]` strings
    verbatim, then the current prompt; no truncation."""
    t = line["turn_idx"] - 1
    reference = ground_truth(line)
    return PredictionTurn(
        id=where,
        domain=subtask(line),
        system=line.get("system_str") or None,
        history=tuple(zip(line["prompt"][:t], line["response"][:t], strict=True)),
        action=current_action(line),
        reference=reference,
        observation={"content": reference},
        turn_index=t,
    )


@dataclass
class Report:
    model: str
    judge: str
    comparable: bool
    per_domain: dict[str, dict[str, float]]
    pooled: dict[str, float]  # every scored line counts once
    equal_weight: dict[str, float]  # the mean over domains
    samples: int
    scored: int
    excluded: dict[str, int]  # reason -> lines
    format_compliance: float | None  # share of answers with a <predicted_observation> block
    verifier_accuracy: float | None
    heldout_loss: float | None = None  # next-observation loss per token, teacher-forced (checkpoints only)
    note: str | None = None
    rejected_lines: list[dict] = field(default_factory=list)  # benchmark lines that could not be read, and why
    line_overall: list[float] = field(default_factory=list)  # each scored line's overall, in order (for noise)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    dims = {d: sum(r[d] for r in rows) / len(rows) for d in DIMENSIONS}
    return {**dims, "overall": sum(dims.values()) / len(DIMENSIONS)}


def _detail(details: list | None, model: str, turn: PredictionTurn, answer, prediction, judgement) -> None:
    if details is None:
        return
    details.append(
        {
            "model": model,
            "id": turn.id,
            "domain": turn.domain,
            "action": turn.action,
            "reference": turn.reference,
            "answer": answer,
            "prediction": prediction.text if prediction else None,
            "tagged": prediction.tagged if prediction else None,
            "scores": judgement.scores.as_dict() if judgement and judgement.ok else None,
            "failure": "no answer" if judgement is None else judgement.failure,
        }
    )


def score(
    model: str, turns: list[PredictionTurn], answers: list[str | None], judge: Judge, details: list[dict] | None = None
) -> Report:
    """Judge every answer (None or "": the model gave none) and aggregate as the benchmark does; `details` gets one
    entry per line (answer, extracted prediction, scores or why there are none)."""
    by_domain: dict[str, list[dict[str, float]]] = defaultdict(list)
    lines_per_domain: Counter = Counter()
    excluded: Counter = Counter()
    verified: list[bool] = []
    tagged = answered = 0
    for turn, answer in zip(turns, answers, strict=True):
        lines_per_domain[turn.domain] += 1
        if not answer:
            excluded["no answer"] += 1
            _detail(details, model, turn, answer, None, None)
            continue
        prediction = extract_prediction(answer)
        answered += 1
        tagged += prediction.tagged
        judgement = judge.judge(turn, prediction.text)
        _detail(details, model, turn, answer, prediction, judgement)
        if not judgement.ok:
            excluded[(judgement.failure or "judge failed").split(":")[0]] += 1
            continue
        by_domain[turn.domain].append(judgement.scores.normalized())
        spec = derive_verifier(turn.observation or {"content": turn.reference}, turn.domain)
        if spec is not None:
            verified.append(verify(spec, prediction.text))
    per_domain = {}
    for domain in sorted(lines_per_domain):
        rows = by_domain.get(domain, [])
        per_domain[domain] = {
            **(_means(rows) if rows else {}),
            "lines": lines_per_domain[domain],
            "scored": len(rows),
        }
    pooled_rows = [r for rows in by_domain.values() for r in rows]
    pooled = _means(pooled_rows) if pooled_rows else {}
    scored_domains = [d for d in per_domain.values() if d["scored"]]
    keys = (*DIMENSIONS, "overall")
    equal = {k: sum(d[k] for d in scored_domains) / len(scored_domains) for k in keys} if scored_domains else {}
    return Report(
        model=model,
        judge=judge.name,
        comparable=judge.comparable,
        per_domain=per_domain,
        pooled=pooled,
        equal_weight=equal,
        samples=len(turns),
        scored=len(pooled_rows),
        excluded=dict(excluded),
        format_compliance=tagged / answered if answered else None,
        verifier_accuracy=sum(verified) / len(verified) if verified else None,
        note=None if judge.comparable else NOT_COMPARABLE,
        line_overall=[sum(r[d] for d in DIMENSIONS) / len(DIMENSIONS) for r in pooled_rows],
    )
