"""Measuring agents: each agent (a policy: scripted, explorer, an endpoint through the llm policy, a checkpoint)
runs one evaluation part of the suites' tasks (collectors.tasks.task_split: the test part by default, the
validation part that choices read with `part="validation"`), in the real
environment, as one `collect` run per agent (collectors/collection.py: the runner, its concurrency, retries, faults
and resume), so every episode is a raw trajectory run folder that feeds the corpus like any other. From those
episodes: the success rate per agent, suite and task family with its 95% interval, mean turns, the share of
answers that could not be read as an action, and apart the infrastructure errors, task errors and tasks without a
check (they say nothing of the agent).

All agents run the same task list, so their rows compare. Each report also splits the part into its rows
(`per_part`): the in-family test tasks and the tasks of the held-out families (out of distribution), each with its
own N.

How it sampled is part of the result: the models act greedily (temperature 0) unless told otherwise, and greedy
episodes are one sample per task (`--repeats N` at a temperature above 0 gives N, with pass@k). The interval is
Wilson's with one episode per task, else a bootstrap over tasks (a task's samples are one draw).

Rows are compared paired: each row's per-task difference from the reference row's, the first model's
(evaluation/paired.py), never two intervals side by side."""

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from trajforge.collectors.collection import Collected, collect, plan_suites, task_name
from trajforge.collectors.config import AGENT_KEY_ENV, MODEL_POLICIES, CollectConfig, policy_for
from trajforge.collectors.policies.base import POLICIES, is_unparseable
from trajforge.collectors.tasks import Suite, task_split
from trajforge.endpoints.model_ref import ModelRef, parse_model
from trajforge.evaluation.intervals import wilson_interval
from trajforge.evaluation.models import how_sampled, samples_per
from trajforge.evaluation.paired import PairedDifference, clustered_mean_interval, paired_difference
from trajforge.sandboxes.base import Task
from trajforge.schemas.records import Trajectory
from trajforge.schemas.sources import read_records
from trajforge.schemas.splits import PART_SPLITS, Part, SplitConfig, collected_task_key

Log = Callable[[str], None]
CONFIDENCE = 0.95
NOT_SCORED = {"infra_error": "infra_errors", "task_error": "task_errors", "unknown": "unchecked"}


@dataclass(frozen=True)
class EvaluatedAgent:
    """One row of the table: a policy, and the model it acts with (None: a model-free policy)."""

    label: str
    policy: str
    model: ModelRef | None = None

    @property
    def settings(self) -> dict:
        """The CollectConfig fields its run reads."""
        return {"policy": self.policy, "agent": self.model}


class AgentEvalError(ValueError):
    """Nothing to evaluate, or an agent that cannot run: one line that says what to do."""


def policy_agent(name: str) -> EvaluatedAgent:
    if name in MODEL_POLICIES:
        raise AgentEvalError(f"--policy {name}: give --agent MODEL instead (a checkpoint folder, smollm2 or URL=MODEL)")
    POLICIES.get(name)  # UnknownName lists the policies there are
    return EvaluatedAgent(name, name)


def model_agent(model: str | ModelRef, key_env: str = AGENT_KEY_ENV) -> EvaluatedAgent:
    """A model acting as the agent: weights through the checkpoint policy, an endpoint through the llm policy."""
    ref = parse_model(model, "--agent", key_env)
    label = f"{ref.endpoint.model} @ {ref.endpoint.url}" if ref.endpoint is not None else ref.weights
    return EvaluatedAgent(label, policy_for(ref), ref)


@dataclass(frozen=True)
class AgentEvalConfig:
    """The agents, and the collect run each of them gets (suites, output, repeats, concurrency, faults, turns,
    seed; its tasks and policy are agent-eval's); `split` must be build-corpus's for its held-out tasks."""

    agents: tuple[EvaluatedAgent, ...] = ()
    # greedy: an evaluation reads the agent's best guess, and one sample per task then says all there is
    run: CollectConfig = CollectConfig(suites=("terminal",), temperature=0.0)
    split: SplitConfig = SplitConfig()
    limit: int | None = None  # the first N held-out tasks of each suite, in the suite's order (None: all)
    part: Part = "test"  # which tasks: the test part (final tables) or the validation part (what choices read)
    # a greedy model's first N tasks run again one at a time (batch 1): how much its batched figures owe the batching
    # (0: no check; nothing to check for a model-free policy, a sampling model or concurrency 1)
    batch_check: int = 8


@dataclass
class Score:
    """One group's episodes, counted. Scored: those that say something of the agent (success, failure, agent
    error, timeout on a task with a check); infrastructure errors, task errors and the episodes of tasks without a
    check are counted apart, so every agent's rate has the same tasks behind it."""

    successes: int = 0
    failures: int = 0
    unparseable: int = 0
    turns: int = 0  # over the scored episodes
    infra_errors: int = 0
    task_errors: int = 0
    unchecked: int = 0
    outcomes: dict[str, list[int]] = field(default_factory=dict)  # task key -> 1/0 per scored episode, repeat order

    def add(self, trajectory: Trajectory, checked: bool = True) -> None:
        """One episode; of a task without a check (`checked` False) it can only be counted apart, however it ended."""
        status = trajectory.outcome.status
        if status not in NOT_SCORED and not checked:
            status = "unknown"
        if status in NOT_SCORED:
            setattr(self, NOT_SCORED[status], getattr(self, NOT_SCORED[status]) + 1)
            return
        self.successes += status == "success"
        self.failures += status != "success"
        self.unparseable += is_unparseable(trajectory.outcome)
        self.turns += len(trajectory.turns)
        task = collected_task_key(trajectory.source.origin or "")
        self.outcomes.setdefault(task, []).append(int(status == "success"))

    @property
    def samples(self) -> int:
        """The most scored episodes of one task (1: one sample per task)."""
        return max(map(len, self.outcomes.values()), default=0)

    def pass_at(self, k: int) -> float | None:
        """pass@k, the unbiased estimator (Chen et al. 2021) over the tasks with at least k scored samples: the
        chance that k of a task's samples drawn without replacement hold a success."""
        tasks = [o for o in self.outcomes.values() if len(o) >= k]
        if not tasks:
            return None
        return sum(1 - math.comb(len(o) - sum(o), k) / math.comb(len(o), k) for o in tasks) / len(tasks)

    @property
    def scored(self) -> int:
        return self.successes + self.failures

    @property
    def episodes(self) -> int:
        return self.scored + self.infra_errors + self.task_errors + self.unchecked

    def rate(self, count: int) -> float | None:
        return count / self.scored if self.scored else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """Wilson's with one episode per task; with several, a bootstrap over tasks (a task's samples: one draw)."""
        if not self.scored:
            return None
        if self.samples == 1:
            return wilson_interval(self.successes, self.scored, CONFIDENCE)
        values = [v for o in self.outcomes.values() for v in o]
        clusters = [task for task, o in self.outcomes.items() for _ in o]
        return clustered_mean_interval(values, clusters, CONFIDENCE)[1:]

    def as_dict(self) -> dict:
        counts = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("turns", "outcomes")}
        return {
            "episodes": self.episodes,
            "scored": self.scored,
            "success_rate": self.rate(self.successes),
            "interval": list(self.interval) if self.interval else None,
            "mean_turns": self.rate(self.turns),
            "unparseable_rate": self.rate(self.unparseable),
            "samples_per_task": self.samples,
            "pass_at_k": {str(k): self.pass_at(k) for k in pass_ks(self.samples)},
            **counts,
        }


def pass_ks(samples: int) -> list[int]:
    """The k of pass@k worth printing for `samples` per task: 1, the powers of two between, and `samples`."""
    return sorted({1, samples, *(2**i for i in range(1, samples.bit_length()) if 2**i < samples)} - {0})


def paired_success(reference: Score, other: Score) -> PairedDifference | None:
    """`other`'s success minus `reference`'s over the tasks both scored (paired_outcomes)."""
    return paired_outcomes(reference.outcomes, other.outcomes)


def paired_outcomes(reference: dict[str, list[int]], other: dict[str, list[int]]) -> PairedDifference | None:
    """`other`'s success minus `reference`'s from per-task outcomes (task -> 1/0 per sample, as a report's
    `outcomes` holds them) over the tasks both scored: the i-th sample of a task paired with the i-th of the other
    row, a task's samples one cluster. None when they share no scored task."""
    a, b, clusters = [], [], []
    for task in sorted(reference.keys() & other.keys()):
        pairs = list(zip(reference[task], other[task], strict=False))
        a += [x for x, _ in pairs]
        b += [y for _, y in pairs]
        clusters += [task] * len(pairs)
    return paired_difference(a, b, clusters, CONFIDENCE) if a else None


@dataclass
class AgentReport:
    agent: EvaluatedAgent
    run_dir: str
    model_free: bool  # no model chose its actions (scripted, explorer)
    overall: Score
    per_suite: dict[str, Score]
    per_family: dict[str, Score]
    per_part: dict[str, Score] = dataclasses.field(default_factory=dict)  # row_part's rows (in family, held-out family)
    ran: int = 0  # episodes this invocation ran; the others were in the run folder already (a resumed run)
    skipped: int = 0
    batch_check: dict | None = None  # batch_check's comparison, where one ran

    def as_dict(self) -> dict:
        return {
            "agent": self.agent.label,
            "policy": self.agent.policy,
            "model_free": self.model_free,
            "run_dir": self.run_dir,
            "ran": self.ran,
            "skipped": self.skipped,
            "overall": self.overall.as_dict(),
            "per_suite": {k: v.as_dict() for k, v in self.per_suite.items()},
            "per_family": {k: v.as_dict() for k, v in self.per_family.items()},
            "per_part": {k: v.as_dict() for k, v in self.per_part.items()},
            "outcomes": self.overall.outcomes,  # task -> 1/0 per scored sample: what the paired differences read
            "batch_check": self.batch_check,
        }


@dataclass(frozen=True)
class EpisodeSampling:
    """How the agents' episodes were sampled, as every table and report states it."""

    temperature: float  # of the models' answers (model-free policies do not sample from a model)
    samples_per_task: int  # --repeats
    seed: int

    def describe(self) -> str:
        return f"{how_sampled(self.temperature)}, {samples_per(self.samples_per_task, 'task')}, seed {self.seed}"

    @property
    def units(self) -> str:
        """What a paired difference of these episodes pairs: tasks, or samples (a task's several: one cluster)."""
        return "tasks" if self.samples_per_task == 1 else "samples, a task's one cluster"


@dataclass
class AgentEvalResult:
    held_out: dict[str, list[str]]  # suite -> the ids of its tasks in the part, every agent's tasks
    split: SplitConfig
    reports: list[AgentReport]
    part: Part = "test"
    sampling: EpisodeSampling = EpisodeSampling(0.0, 1, 0)

    @property
    def errors(self) -> int:
        """Episodes that ended in an infrastructure or a task error, over every agent."""
        return sum(r.overall.infra_errors + r.overall.task_errors for r in self.reports)

    @property
    def reference(self) -> AgentReport | None:
        """The row every other is compared with: the first model's (the first --agent), else the first row."""
        models = [r for r in self.reports if r.agent.model is not None]
        return (models or self.reports or [None])[0]

    @property
    def paired(self) -> list[tuple[AgentReport, PairedDifference | None]]:
        """Every other row with its success minus the reference's, paired by task."""
        reference = self.reference
        return [(r, paired_success(reference.overall, r.overall)) for r in self.reports if r is not reference]

    def as_dict(self) -> dict:
        agents = {id(r): r.as_dict() for r in self.reports}
        for report, difference in self.paired:
            agents[id(report)]["paired_vs_reference"] = paired_dict(difference, self.sampling.units)
        return {
            "confidence": CONFIDENCE,
            "sampling": dataclasses.asdict(self.sampling),
            "split": dataclasses.asdict(self.split),
            "part": self.part,
            "held_out_tasks": self.held_out,
            "reference": self.reference.agent.label if self.reports else None,
            "agents": list(agents.values()),
        }


def paired_dict(difference: PairedDifference | None, of: str = "tasks") -> dict | None:
    """A paired difference as the JSON reports record it (its figures, and the line the tables print); `of`: what
    its units are."""
    return None if difference is None else dataclasses.asdict(difference) | {"describe": difference.describe(of=of)}


def held_out_suites(suites: Iterable[Suite], split: SplitConfig, part: Part = "test") -> list[Suite]:
    """Each suite with only its tasks of one evaluation part (test: the held-out ones, held-out families with them)."""
    side = PART_SPLITS[part]
    return [dataclasses.replace(s, tasks=tuple(t for t in s.tasks if task_split(s, t, split) == side)) for s in suites]


HELD_OUT_FAMILY = "held-out family"
IN_FAMILY = "in family"


def row_part(task: Task, split: SplitConfig, part: Part) -> str:
    """The row of a part a task's figures go to: the test part's tasks of a held-out family (out of distribution)
    apart from its in-family tasks; a validation task is never of a held-out family."""
    if part == "validation":
        return part
    held_out_family = task.family is not None and task.family in split.held_out_families
    return f"{part}, {HELD_OUT_FAMILY if held_out_family else IN_FAMILY}"


def family_of(suite: Suite, task: Task) -> str:
    """The family a task's figures go to: the one that generated it, or for a hand-written task its suite's name."""
    return task.family or suite.name


def family_label(family: str, split: SplitConfig) -> str:
    """A family's name as a table's group shows it: a held-out family (out of distribution) says so."""
    return f"{family} ({HELD_OUT_FAMILY})" if family in split.held_out_families else family


def evaluate_agents(
    config: AgentEvalConfig, log: Log, warn: Log, progress=lambda items, description, total: items
) -> AgentEvalResult:
    """Run every agent on the same tasks of the part and score them; AgentEvalError (a ValueError) before any
    episode runs when there is no agent or no task in the part."""
    if not config.agents:
        raise AgentEvalError("name an agent to evaluate: -c CHECKPOINT, --endpoint URL=MODEL or --policy NAME")
    refuse_greedy_copies(config.run, config.agents)
    suites = held_out_suites(plan_suites(dataclasses.replace(config.run, tasks=())), config.split, config.part)
    if config.limit is not None:
        held = sum(len(s.tasks) for s in suites)
        suites = [dataclasses.replace(s, tasks=s.tasks[: config.limit]) for s in suites]
        log(f"--limit {config.limit}: {sum(len(s.tasks) for s in suites)} of the {held} {config.part} tasks")
    split = config.split
    for suite in suites:
        if not suite.tasks:
            warn(f"{suite.name}: no {config.part} task (test share {split.held_out}, validation share "
                 f"{split.validation}, seed {split.seed})")  # fmt: skip
    places = {collected_task_key(task_name(s, t)): (s, t) for s in suites for t in s.tasks}
    if not places:
        raise AgentEvalError(f"no {config.part} task in {', '.join(s.name for s in suites)}: nothing to evaluate")
    names = tuple(task_name(s, t) for s, t in places.values())
    parts = {key: row_part(task, split, config.part) for key, (_, task) in places.items()}
    reports = []
    for agent in config.agents:
        run = dataclasses.replace(config.run, tasks=names, **agent.settings)
        collected = collect(run, log, warn, progress)
        reports.append(score_agent(agent, collected, places, parts))
        if config.batch_check and agent.model is not None and run.temperature == 0 and run.concurrency > 1:
            reports[-1].batch_check = batch_check(run, collected, config.batch_check, log, warn, progress)
    sampling = EpisodeSampling(config.run.temperature, config.run.repeats, config.run.seed)
    held = {s.name: [t.id for t in s.tasks] for s in suites}
    return AgentEvalResult(held, split, reports, config.part, sampling)


def refuse_greedy_copies(run: CollectConfig, agents: Iterable[EvaluatedAgent]) -> None:
    """AgentEvalError when a model would act greedily in several samples of a task: they would be copies of one
    episode counted as independent ones."""
    if run.repeats > 1 and run.temperature == 0 and any(a.model is not None for a in agents):
        raise AgentEvalError(
            f"--repeats {run.repeats} at --temperature 0: a greedy model's samples of a task are copies of one "
            "episode; give --temperature above 0 for several samples per task, or --repeats 1"
        )


def score_agent(
    agent: EvaluatedAgent,
    collected: Collected,
    places: dict[str, tuple[Suite, Task]],
    parts: dict[str, str] | None = None,
) -> AgentReport:
    """The agent's figures from the episodes its run folder holds of the planned tasks (a resumed run's too);
    `parts`: each planned task's row of the part (row_part; None: no such rows)."""
    parts = parts or {}
    overall = Score()
    per_suite = {s.name: Score() for s, _ in places.values()}
    per_family = {family: Score() for family in sorted({family_of(s, t) for s, t in places.values()})}
    per_part = {part: Score() for part in sorted(set(parts.values()), key=lambda part: HELD_OUT_FAMILY in part)}
    models = set()
    for result in sorted(read_records([collected.run_dir]), key=_origin):  # a task's samples in repeat order
        if not result.ok or (key := collected_task_key(result.record.source.origin or "")) not in places:
            continue
        suite, task = places[key]
        rows = (per_suite[suite.name], per_family[family_of(suite, task)], *([per_part[parts[key]]] if parts else []))
        for score in (overall, *rows):
            score.add(result.record, checked=task.check is not None)
        models.add(result.record.agent.model)
    run = collected.result
    return AgentReport(agent, collected.run_dir, models <= {None}, overall, per_suite, per_family, per_part,
                       run.ran, run.skipped)  # fmt: skip


def _origin(result) -> tuple[str, int]:
    """An episode's task and repeat (`<suite>/<task>#<repeat>`), repeats in number order."""
    place, _, repeat = (result.record.source.origin or "").rpartition("#") if result.ok else ("", "", "")
    return place, int(repeat) if repeat.isdigit() else -1


def batch_check(run: CollectConfig, batched: Collected, tasks: int, log: Log, warn: Log, progress) -> dict:
    """The first `tasks` of a greedy run's tasks run again one at a time (concurrency 1: every answer generated
    alone) beside the batched run: how many took the same actions, and the successes of each on those tasks."""
    names = run.tasks[:tasks]
    alone_run = dataclasses.replace(run, tasks=names, concurrency=1, run_id=f"{batched.run_id}-batch1")
    alone_collected = collect(alone_run, log, warn, progress)
    alone, together = run_records(alone_collected.run_dir), run_records(batched.run_dir)
    keys = sorted(k for k in alone if k in together)
    return {
        "tasks": len(names),
        "episodes": len(keys),
        "same_actions": sum([t.action for t in alone[k].turns] == [t.action for t in together[k].turns] for k in keys),
        "successes_batched": sum(together[k].outcome.status == "success" for k in keys),
        "successes_alone": sum(alone[k].outcome.status == "success" for k in keys),
        "run_dir": alone_collected.run_dir,
    }


def run_records(run_dir: str) -> dict[str, Trajectory]:
    """A run folder's readable episodes by key (`<suite>/<task>#<repeat>`)."""
    return {r.record.source.origin: r.record for r in read_records([run_dir]) if r.ok}
