"""`trajforge sim-check`: is a world model faithful enough to train agents in? Measured against the real
environment, per domain and task family, on held-out tasks:

- single step (held-out corpus turns): exact match, error-flag agreement and the judge's scores, for the world
  model and, on the same turns, the two model-free baselines (copy previous, retrieval);
- success agreement, WM2Real and controllability, from episodes (agents/sim_episodes.py).

The world model is anything that answers a conversation (`evaluation.models.ChatModel`) for the single turns,
plus what collect's `--world-model` takes for the episodes (`world_model_of`): an endpoint's URL=MODEL as given, or
a checkpoint's folder, loaded in-process (agents/world_model.py)."""

import contextlib
import dataclasses
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.agents.agent_eval import (
    EpisodeSampling,
    EvaluatedAgent,
    family_label,
    refuse_greedy_copies,
)
from trajforge.agents.sim_episodes import EpisodePlan, outcome_success, run_episodes
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.simulation import MAX_TOKENS, Simulation
from trajforge.endpoints.model_ref import FORMS, ModelRef
from trajforge.evaluation.benchmark import sample_turns
from trajforge.evaluation.extraction import extract_prediction
from trajforge.evaluation.factory import JudgeSpec
from trajforge.evaluation.fidelity import one_sided, step_figures, turn_agreement
from trajforge.evaluation.models import ChatModel, Sampling
from trajforge.evaluation.paired import clustered_share_interval, paired_difference
from trajforge.evaluation.turns import corpus_turn
from trajforge.sandboxes.control import load_control, recorded_control
from trajforge.sandboxes.controllability import ControlledTurn, turn_controllability
from trajforge.schemas.hashing import config_hash
from trajforge.schemas.records import Action, Trajectory
from trajforge.schemas.splits import Part, SplitConfig, task_key

Log = Callable[[str], None]


class SimCheckError(ValueError):
    """Nothing to check (no world model, no held-out turn): one line that says what to give."""


@dataclass(frozen=True)
class CheckedWorldModel:
    name: str
    chat: ChatModel  # answers single held-out turns
    ref: ModelRef  # what its episodes are simulated with: its folder (loaded in-process), or its endpoint


@dataclass(frozen=True)
class SimCheckConfig:
    corpus: str = "data/corpus"  # held-out turns for the single-step figures; its training split for retrieval
    limit: int | None = None  # held-out trajectories at most (single step)
    plain: bool = True  # single step: plain CPT-style prompts (False: the SFT reasoning templates)
    # the agent acts greedily unless told: a real and a simulated episode then differ only by the environment
    run: CollectConfig = CollectConfig(suites=("terminal",), output="data/sim-check", temperature=0.0)
    agent: EvaluatedAgent = EvaluatedAgent("scripted", "scripted")
    split: SplitConfig = SplitConfig()
    part: Part = "test"  # which held-out tasks and turns: the test part, or the validation part choices read
    episodes: bool = True  # False: the single-step figures only (no environment is started)
    judge: JudgeSpec = field(default_factory=JudgeSpec)
    sampling: Sampling = Sampling(0.0, 512, 0)
    simulated_success: Callable[[Trajectory], bool | None] = outcome_success
    # the world model checked and how its episodes ask it (a file check's rule, an observation's tokens); its
    # prompt follows `plain`; its control distribution is the controllability episodes' (None: none are run)
    simulation: Simulation | None = None

    @property
    def control(self) -> str | None:
        return self.simulation.control if self.simulation is not None else None

    def episode_simulation(self, world: "CheckedWorldModel") -> Simulation:
        """The simulation the episodes run in: the checked world model as loaded, asked as the single turns are."""
        prompt = "plain" if self.plain else "template"
        simulation = self.simulation or Simulation(world.ref)
        return dataclasses.replace(simulation, world_model=world.ref, prompt=prompt, control=None)


@contextlib.contextmanager
def world_model_of(ref: ModelRef):
    """The world model `ref` names: an endpoint's answers, or a folder's weights (which answer single turns and,
    loaded in-process, its episodes)."""
    if ref.endpoint is not None:
        from trajforge.evaluation.models import EndpointModel

        endpoint = dataclasses.replace(ref.endpoint, timeout=300.0)
        yield CheckedWorldModel(endpoint.model, EndpointModel(endpoint), ref)
        return
    from trajforge.training.chat_models import CheckpointModel
    from trajforge.training.model import resolve_init

    folder = Path(resolve_init(ref.weights))
    if not (folder / "config.json").exists():
        raise SimCheckError(f"--world-model {ref}: not a model folder (no config.json); give {FORMS}")
    chat = CheckpointModel(folder)
    yield CheckedWorldModel(chat.name, chat, ModelRef(weights=str(folder.resolve())))


def run_prefix(config: SimCheckConfig, world: CheckedWorldModel) -> str:
    """The episode runs' names: a fresh world model, agent or control gets its own runs; the same check resumes."""
    if config.run.run_id:
        return config.run.run_id
    key = {"world": world.ref.text, "agent": config.agent.label, "control": config.control,
           "seed": config.run.seed, "suites": config.run.suites, "repeats": config.run.repeats,
           "tasks": config.run.tasks}  # fmt: skip
    if config.part != "test":  # the test part's runs keep their names
        key["part"] = config.part
    if config.agent.model is not None:  # a model's episodes depend on how it samples (a policy's do not)
        key["temperature"] = config.run.temperature
    simulation = config.simulation or Simulation(world.ref)
    if simulation.max_tokens != MAX_TOKENS:
        key["max_tokens"] = simulation.max_tokens
    return f"sim-check-{config_hash(key)[:8]}"


def check_simulator(
    config: SimCheckConfig,
    world: CheckedWorldModel,
    log: Log,
    warn: Log,
    progress=None,
    details: list[dict] | None = None,
) -> dict:
    """All the figures, as the JSON sim-check writes; SimCheckError before anything runs when there is nothing.
    `details` gets every single-step turn's answer and judgement, per model (sim-check --predictions)."""
    progress = progress or (lambda items, description, total: items)
    if config.episodes:
        refuse_greedy_copies(config.run, [config.agent])
    if config.episodes and config.control:
        load_control(config.control)  # a bad control file is refused before any model is asked
    result = {"world_model": world.name, "agent": config.agent.label, "judge": config.judge.build().label,
              "sampling": sampling_of(config)}  # fmt: skip
    result["single_step"] = single_step(config, world.chat, progress, warn, details)
    if config.episodes:
        plan = EpisodePlan(config.run, config.agent, config.episode_simulation(world), run_prefix(config, world),
                           config.split, config.control, config.simulated_success, config.part)  # fmt: skip
        result["episodes"] = run_episodes(plan, log, warn, progress)
    return result


def sampling_of(config: SimCheckConfig) -> dict:
    """How sim-check sampled, as its report and tables state it: the single-step answers, and the episodes' agent
    (its temperature, samples per task, seed; a model-free agent does not sample from a model)."""
    episodes = EpisodeSampling(config.run.temperature, config.run.repeats, config.run.seed)
    return {
        "single_step": dataclasses.asdict(config.sampling),
        "episodes": dataclasses.asdict(episodes) | {"model_free_agent": config.agent.model is None},
    }


def _group(row: dict, split: SplitConfig) -> str:
    meta = json.loads(row.get("metadata") or "{}")
    family = meta.get("family") if isinstance(meta, dict) else None
    suite = (row.get("source") or {}).get("origin") or ""
    return f"{row['domain']}/{family_label(family or suite.partition('/')[0] or 'other', split)}"


class _Warnings:
    """What the baselines have to say (a retrieval baseline with no training split), as warnings."""

    def __init__(self, warn: Log):
        self.warn = warn

    def note(self, text: str, kind: str = "info") -> None:
        self.warn(text)


def single_step(
    config: SimCheckConfig, model: ChatModel, progress, warn: Log = print, details: list[dict] | None = None
) -> dict:
    """{group: {model name: figures}} over the held-out turns, for the world model and both baselines; `details`
    gets one entry per turn and model."""
    from trajforge.evaluation.run import baseline_models, corpus_rows

    try:
        rows = corpus_rows(config.corpus, config.limit, config.part)
    except (FileNotFoundError, ValueError) as exc:
        raise SimCheckError(f"--corpus {config.corpus}: {exc}") from exc
    turns = [(corpus_turn(r, i, plain=config.plain), _group(r, config.split), r)
             for r in rows for i in sample_turns(len(r["turns"]))]  # fmt: skip
    if not turns:
        raise SimCheckError(f"--corpus {config.corpus}: no {config.part} turn to predict")
    judge = config.judge.build()
    models: list[ChatModel] = [model, *baseline_models(config.corpus, _Warnings(warn))]
    figures: dict = defaultdict(dict)
    per_turn: dict[str, dict[str, list]] = {}
    episodes = [id(row) for _, _, row in turns]  # the turns of one episode: one cluster of every interval
    for chat in models:
        answers = [
            chat.answer([{"role": r, "content": c} for r, c in turn.messages], config.sampling.for_item(turn.id))
            for turn, _, _ in progress(turns, f"single step: {chat.name}", len(turns))
        ]
        per_turn[chat.name] = model_step_figures(chat.name, turns, answers, episodes, judge, figures, details)
    figures = dict(figures)
    paired = paired_with_baselines(model.name, per_turn, [g for _, g, _ in turns], episodes)
    for group, against in paired.items():
        figures[group][model.name]["paired"] = against
    return figures


def model_step_figures(name: str, turns: list, answers: list, episodes: list, judge, figures: dict,
                   details: list[dict] | None) -> dict[str, list]:  # fmt: skip
    """One model's figures per group (and over all) into `figures[group][name]`, its exact match with its interval
    over turns, an episode's turns one cluster; returns its per-turn values of PAIRED_FIGURES (a factuality of
    None where the judge gave no score)."""
    exact, flags = turn_agreement([t for t, _, _ in turns], answers)
    scores: list[dict] = []
    for group in sorted({g for _, g, _ in turns}) + ["all"]:
        chosen = [i for i, (_, g, _) in enumerate(turns) if group in (g, "all")]
        picked = [(turns[i][0], answers[i], turns[i][2]) for i in chosen]
        step = step_figures(name, [t for t, _, _ in picked], [a for _, a, _ in picked], judge,
                            details if group == "all" else None, scores if group == "all" else None)  # fmt: skip
        _, low, high = clustered_share_interval([exact[i] for i in chosen], [episodes[i] for i in chosen])
        figures[group][name] = step | {"exact_match_interval": [low, high]} | _instructed_turns(picked)
    factuality = [s.get("factuality") for s in scores]
    return {"exact_match": exact, "error_flag_agreement": flags, "judge_factuality": factuality}


def paired_with_baselines(world: str, per_turn: dict, groups: list[str], episodes: list) -> dict:
    """{group: {baseline: {figure: paired difference}}}: the world model's exact match, error-flag agreement and
    judge factuality minus each baseline's, on the same turns (`per_turn`: model -> figure -> its per-turn values:
    1/0, and factuality 0-100 or None where the judge gave no score: paired over the turns both have), the turns
    of one episode one cluster (they share its files and history). None where no turn pairs."""
    paired: dict = {}
    for group in sorted(set(groups)) + ["all"]:
        chosen = [i for i, g in enumerate(groups) if group in (g, "all")]
        for name, theirs in per_turn.items():
            if name == world:
                continue
            figures = {}
            for figure, (unit, scale) in PAIRED_FIGURES.items():
                ours, other = per_turn[world][figure], theirs[figure]
                both = [i for i in chosen if ours[i] is not None and other[i] is not None]
                if not both:
                    figures[figure] = None
                    continue
                d = paired_difference([other[i] for i in both], [ours[i] for i in both], [episodes[i] for i in both])
                figures[figure] = dataclasses.asdict(d) | {"unit": unit, "describe": d.describe(scale, of="turns")}
            paired.setdefault(group, {})[name] = figures
    return paired


# figure -> (the unit of its paired difference as recorded, the scale its `describe` prints it at, in points)
PAIRED_FIGURES = {
    "exact_match": ("share of turns (0-1)", 100.0),
    "error_flag_agreement": ("share of turns (0-1)", 100.0),
    "judge_factuality": ("factuality, 0-100 as judge_factuality", 1.0),
}


def _instructed_turns(chosen: list) -> dict:
    """Controllability on single held-out turns of episodes that record a control spec (real fault-injected ones:
    their instruction says what the observation shows), when there are some."""
    scored = []
    for turn, answer, row in chosen:
        spec = recorded_control(row.get("metadata"))
        if spec is not None:
            action = Action.model_validate(row["turns"][turn.turn_index]["action"], strict=False)
            text = extract_prediction(answer).text if answer else ""
            scored.append(ControlledTurn(spec, turn.turn_index, action, text, task_key(row)))
    return {"controllability": turn_controllability(scored)} if scored else {}


@dataclass(frozen=True)
class Thresholds:
    """What a world model must reach to be worth training in (the issue's targets by default); a caller such as
    an RL run in simulation warns below them."""

    exact_match: float = 0.8
    success_agreement: float = 0.85
    faults_produced: float = 0.9


def below_thresholds(result: dict, thresholds: Thresholds = Thresholds()) -> list[str]:
    """One line per figure of `check_simulator`'s result (over all groups) that does not clear its threshold (below
    it, or its 95% interval reaching below it), and per baseline the world model is not above, on the same turns,
    in exact match or factuality (the paired difference's interval holds zero); [] when it clears them all."""
    step = result["single_step"].get("all", {})
    world = step.get(result["world_model"], {})
    exact = _short_of("single-step exact match", world.get("exact_match"), world.get("exact_match_interval"),
                      thresholds.exact_match)  # fmt: skip
    warnings = [exact] if exact else []
    for name, paired in world.get("paired", {}).items():  # on the same turns: above the baseline beyond noise?
        for figure, words in (("exact_match", "exact match"), ("judge_factuality", "factuality")):
            if (difference := paired.get(figure)) is not None and difference["low"] <= 0:
                warnings.append(f"{words} is not above the baseline {name}: {difference['describe']}")
    episodes = result.get("episodes", {})
    success = episodes.get("success", {}).get("all", {})
    agreement = success.get("agreement")
    if short := _short_of("success agreement", agreement, success.get("agreement_interval"),
                          thresholds.success_agreement):  # fmt: skip
        warnings.append(short)
    elif agreement is not None and (why := one_sided(success.get("real_outcomes"))):
        warnings.append(f"success agreement {agreement:.1%} decides nothing: {why}")
    control = episodes.get("controllability", {}).get("all", {})
    if short := _short_of("instructed faults produced", control.get("produced_share"),
                          control.get("produced_interval"), thresholds.faults_produced):  # fmt: skip
        warnings.append(short)
    return warnings


def _short_of(figure: str, value: float | None, interval: list | None, threshold: float) -> str | None:
    """Why a share does not clear `threshold`, in words, or None when it does (or is not measured): it is below it,
    or its 95% interval (when recorded) reaches below it, so it is not shown to reach it."""
    if value is None:
        return None
    shown = f"{figure} {value:.1%}" + (f" [{interval[0]:.1%}, {interval[1]:.1%}]" if interval else "")
    if value < threshold:
        return f"{shown} is below {threshold:.0%}"
    if interval and interval[0] < threshold:
        return f"{shown} is not shown to reach {threshold:.0%}: its 95% interval reaches below it"
    return None
