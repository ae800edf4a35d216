"""Measuring agents: each agent (a policy: scripted, explorer, an endpoint through the llm policy, a checkpoint)
runs one evaluation part of the suites' tasks (collectors.tasks.task_split: the test part by default, the
validation part that choices read with `part="validation"`), in the real
environment, as one `collect` run per agent (collectors/collection.py: the runner, its concurrency, retries, faults
and resume), so every episode is a raw trajectory run folder that feeds the corpus like any other. From those
episodes: the success rate per agent, suite and task family with its 95% Wilson interval, mean turns, the share of
answers that could not be read as an action, and apart the infrastructure errors, task errors and tasks without a
check (they say nothing of the agent).

All agents run the same task list, so their rows compare. Each report also splits the part into its rows
(`per_part`): the in-family test tasks and the tasks of the held-out families (out of distribution), each with its
own N."""

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from trajforge.collectors.collection import Collected, collect, plan_suites, task_name
from trajforge.collectors.config import AGENT_KEY_ENV, MODEL_POLICIES, CollectConfig, policy_for
from trajforge.collectors.policies.base import POLICIES, is_unparseable
from trajforge.collectors.tasks import Suite, task_split
from trajforge.endpoints.model_ref import ModelRef, parse_model
from trajforge.evaluation.intervals import wilson_interval
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
    run: CollectConfig = CollectConfig(suites=("terminal",))
    split: SplitConfig = SplitConfig()
    limit: int | None = None  # the first N held-out tasks of each suite, in the suite's order (None: all)
    part: Part = "test"  # which tasks: the test part (final tables) or the validation part (what choices read)


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
        return wilson_interval(self.successes, self.scored, CONFIDENCE) if self.scored else None

    def as_dict(self) -> dict:
        counts = {k: v for k, v in dataclasses.asdict(self).items() if k != "turns"}
        return {
            "episodes": self.episodes,
            "scored": self.scored,
            "success_rate": self.rate(self.successes),
            "interval": list(self.interval) if self.interval else None,
            "mean_turns": self.rate(self.turns),
            "unparseable_rate": self.rate(self.unparseable),
            **counts,
        }


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
        }


@dataclass
class AgentEvalResult:
    held_out: dict[str, list[str]]  # suite -> the ids of its tasks in the part, every agent's tasks
    split: SplitConfig
    reports: list[AgentReport]
    part: Part = "test"

    @property
    def errors(self) -> int:
        """Episodes that ended in an infrastructure or a task error, over every agent."""
        return sum(r.overall.infra_errors + r.overall.task_errors for r in self.reports)

    def as_dict(self) -> dict:
        return {
            "confidence": CONFIDENCE,
            "split": dataclasses.asdict(self.split),
            "part": self.part,
            "held_out_tasks": self.held_out,
            "agents": [r.as_dict() for r in self.reports],
        }


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
        reports.append(score_agent(agent, collect(run, log, warn, progress), places, parts))
    return AgentEvalResult({s.name: [t.id for t in s.tasks] for s in suites}, split, reports, config.part)


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
    for result in read_records([collected.run_dir]):
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
