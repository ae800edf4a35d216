"""Benchmark sampling and scoring, as AgentWorldBench does it. Corpus trajectories are sampled at the first, the
last and three evenly spaced middle turns; a benchmark line is scored at its own turn. Every answer goes through
the one extractor, then the judge; scores are normalised as (raw - 1) / 4 x 100. Every row is scored on every turn
it was asked: an empty prediction is a prediction (right where the real observation is empty), no answer is a
miss (`evaluation.judge.judge_prediction`); only a turn whose judge failed has no scores, and is counted. Two
overall figures: pooled (every turn once) and equal-weight over domains; apart from them, labelled, the aggregate
as AgentWorldBench's reader computes it (lines with an empty answer dropped). Every report names its judge."""

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from trajforge.evaluation.extraction import Prediction, extract_prediction
from trajforge.evaluation.judge import NOT_COMPARABLE, Judge, Judgement, judge_prediction
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
    verbatim, then the current prompt; no truncation. Lines of one trajectory (the same task and id) share its
    trajectory id, so they are one cluster of an interval."""
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
        trajectory_id=f"{subtask(line)}:{line['id']}" if line.get("id") is not None else "",
        turn_index=t,
    )


READER_LABEL = (
    "AgentWorldBench reader (as the official reader aggregates: lines with an empty answer or no scores dropped, "
    "so its rows may differ in lines)"
)
SCORE_KEYS = (*DIMENSIONS, "overall")


def turn_cluster(turn: PredictionTurn) -> str:
    """The unit turns share for an interval: a corpus turn's episode (trajectory), else the turn itself."""
    return turn.trajectory_id or turn.id


@dataclass
class Report:
    model: str
    judge: str
    comparable: bool
    per_domain: dict[str, dict[str, float]]
    pooled: dict[str, float]  # every scored turn counts once
    equal_weight: dict[str, float]  # the mean over domains
    samples: int  # the turns asked: every row of one run is asked the same ones
    scored: int  # the turns with scores: all but those whose judge failed
    excluded: dict[str, int]  # judge failure -> turns left without scores
    format_compliance: float | None  # share of turns answered with a <predicted_observation> block
    verifier_accuracy: float | None
    empty_predictions: int = 0  # predictions that the action prints nothing: scored, right where the real one is empty
    unanswered: int = 0  # turns without an answer (a failed request): scored as misses
    heldout_loss: float | None = None  # next-observation loss per token, teacher-forced (checkpoints only)
    note: str | None = None
    rejected_lines: list[dict] = field(default_factory=list)  # benchmark lines that could not be read, and why
    per_turn: dict[str, dict] = field(default_factory=dict)  # turn id -> cluster, tagged (0/1), scores (0-100)
    agentworldbench_reader: dict = field(default_factory=dict)  # READER_LABEL's aggregate, kept apart
    sampling: dict = field(default_factory=dict)  # how the run sampled (evaluation.run)
    paired: list[dict] = field(default_factory=list)  # this row against the row before it and the baselines

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def turns_scored(self) -> set[str]:
        return {turn for turn, values in self.per_turn.items() if "overall" in values}


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    dims = {d: sum(r[d] for r in rows) / len(rows) for d in DIMENSIONS}
    return {**dims, "overall": sum(dims.values()) / len(DIMENSIONS)}


def _aggregate(scored: list[tuple[str, dict[str, float]]]) -> tuple[dict, dict, dict[str, int]]:
    """(pooled, equal-weight over domains, turns per domain) of (domain, normalised scores) pairs."""
    by_domain: dict[str, list[dict[str, float]]] = defaultdict(list)
    for domain, values in scored:
        by_domain[domain].append(values)
    pooled = _means([values for _, values in scored]) if scored else {}
    domains = [_means(rows) for rows in by_domain.values()]
    equal = {k: sum(d[k] for d in domains) / len(domains) for k in SCORE_KEYS} if domains else {}
    return pooled, equal, {domain: len(rows) for domain, rows in by_domain.items()}


@dataclass(frozen=True)
class _Turn:
    """One turn as a row scored it."""

    turn: PredictionTurn
    answer: str | None
    prediction: Prediction | None
    judgement: Judgement
    verified: bool | None  # None: no rule derives from the real observation

    @property
    def normalized(self) -> dict[str, float] | None:
        if not self.judgement.ok:
            return None
        values = self.judgement.scores.normalized()
        return {**values, "overall": sum(values.values()) / len(DIMENSIONS)}

    @property
    def empty(self) -> bool:
        return self.prediction is not None and self.prediction.empty


def _score_turn(turn: PredictionTurn, answer: str | None, judge: Judge) -> _Turn:
    prediction = extract_prediction(answer) if answer is not None else None
    text = prediction.text if prediction is not None else None
    judgement = judge_prediction(judge, turn, text)
    spec = derive_verifier(turn.observation or {"content": turn.reference}, turn.domain)
    return _Turn(turn, answer, prediction, judgement, verify(spec, text) if spec is not None else None)


def _detail(model: str, scored: _Turn) -> dict:
    turn, prediction, judgement = scored.turn, scored.prediction, scored.judgement
    return {
        "model": model,
        "id": turn.id,
        "domain": turn.domain,
        "action": turn.action,
        "reference": turn.reference,
        "answer": scored.answer,
        "prediction": prediction.text if prediction else None,
        "tagged": prediction.tagged if prediction else None,
        "scores": judgement.scores.as_dict() if judgement.ok else None,
        "rule": judgement.rule,
        "failure": judgement.failure,
    }


def _reader_aggregate(turns: list[_Turn]) -> dict:
    """The aggregate as AgentWorldBench's reader computes it: a line with an empty answer is dropped."""
    kept = [(t.turn.domain, t.normalized) for t in turns if t.normalized is not None and t.prediction and not t.empty]
    pooled, equal, per_domain = _aggregate(kept)
    return {"label": READER_LABEL, "pooled": pooled, "equal_weight": equal, "lines": len(kept), "domains": per_domain}


def _per_domain(turns: list[_Turn]) -> dict[str, dict[str, float]]:
    per_domain = {}
    for domain in sorted({t.turn.domain for t in turns}):
        rows = [t.normalized for t in turns if t.turn.domain == domain and t.normalized is not None]
        lines = sum(t.turn.domain == domain for t in turns)
        per_domain[domain] = {**(_means(rows) if rows else {}), "lines": lines, "scored": len(rows)}
    return per_domain


def score(
    model: str, turns: list[PredictionTurn], answers: list[str | None], judge: Judge, details: list[dict] | None = None
) -> Report:
    """Score every answer on its turn (None: the model gave none; "" or a prediction of whitespace: it predicts
    that the action prints nothing) and aggregate as the benchmark does; `details` gets one entry per turn
    (answer, extracted prediction, scores or why there are none, and the rule that gave them where one did)."""
    scored = [_score_turn(turn, answer, judge) for turn, answer in zip(turns, answers, strict=True)]
    if details is not None:
        details.extend(_detail(model, t) for t in scored)
    pooled, equal, _ = _aggregate([(t.turn.domain, t.normalized) for t in scored if t.normalized is not None])
    verified = [t.verified for t in scored if t.verified is not None]
    excluded = Counter((t.judgement.failure or "judge failed").split(":")[0] for t in scored if not t.judgement.ok)
    tagged = [int(bool(t.prediction and t.prediction.tagged)) for t in scored]
    return Report(
        model=model,
        judge=judge.name,
        comparable=judge.comparable,
        per_domain=_per_domain(scored),
        pooled=pooled,
        equal_weight=equal,
        samples=len(turns),
        scored=sum(t.normalized is not None for t in scored),
        excluded=dict(excluded),
        format_compliance=sum(tagged) / len(tagged) if tagged else None,
        verifier_accuracy=sum(verified) / len(verified) if verified else None,
        empty_predictions=sum(t.empty for t in scored),
        unanswered=sum(t.answer is None for t in scored),
        note=None if judge.comparable else NOT_COMPARABLE,
        per_turn={t.turn.id: _turn_values(t, tag) for t, tag in zip(scored, tagged, strict=True)},
        agentworldbench_reader=_reader_aggregate(scored),
    )


def _turn_values(scored: _Turn, tagged: int) -> dict:
    return {"cluster": turn_cluster(scored.turn), "tagged": tagged, **(scored.normalized or {})}
