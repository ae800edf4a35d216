"""`train agent-rl`: multi-turn GSPO over whole episodes in real environments.

Each step takes `tasks_per_step` training-split tasks of the suites (a held-out task or family never:
collectors.tasks.task_split decides, as build-corpus splits the episodes collected of it), runs G episodes of each
with the current policy (agents/rollouts.py: each in its own environment, concurrently, answers batched on the
device, tokens kept as generated) and rewards each with its task's check: 1 for success, 0 otherwise (an
unparseable answer ends the episode with 0, as the turn limit and a full context do). Advantages are normalised
within each task's group; the ratio is GSPO's sequence-level one over the agent's own tokens of every turn,
observation and template tokens masked, with an optional KL to the starting model (`kl_coef`). The update and the
loss are training/rl.py's and training/gspo.py's; the optimizer, checkpoints, resume and metrics.jsonl are
training/optimization.py's, as in every stage. An episode that the infrastructure or a broken task ended says
nothing about the policy and is left out of its group.

With `simulation` (collectors/simulation.py) every episode runs in its world model instead, as `collect
--world-model` runs them: each task grounded in its real starting state, its reward the task's check run in the
world model; with the simulation's `control`, each episode under a control spec sampled from that distribution.
Before training, the world model's single-step figures on `sim_check_corpus` are printed, with a warning for each
below its threshold; with `audit_every`, every so many steps the step's episodes are replayed in the real
environment and the metrics say how often the simulated reward was the real outcome (agents/reward_audit.py).

Each step's metrics line says whether RL can learn: the success rate and the share of degenerate groups (every
episode of a task with the same reward: no gradient). With a guide (`scripted`: a demonstration step inside the
GSPO update; `scripted-weighted`: the same demonstration importance-weighted against the scripted policy;
agents/guidance.py) a group whose episodes all failed gets one successful episode of the task's scripted solution,
counted in `guided_groups` and `guided_share`; the step's other figures are the policy's own episodes'. The tasks
and episode seeds of a step depend on the seed and the step only, never on the guide: a guided and an unguided run
from one --init and --seed draw the same tasks in the same order, a paired comparison."""

import copy
import dataclasses
import time
from collections import Counter
from pathlib import Path

import torch

from trajforge.agents.checkpoint_policy import Actor, acting_folder
from trajforge.agents.config import AgentRLConfig
from trajforge.agents.guidance import add_guides, behaviour_logprobs, check_guide, guide_probabilities
from trajforge.agents.reward_audit import audit_due, audit_rewards
from trajforge.agents.rollouts import Rollout, plan_groups, run_rollouts
from trajforge.agents.sim_check import Thresholds
from trajforge.collectors.collection import in_world_model, prepare_environments, start_docker
from trajforge.collectors.environments import Settings, build_environment
from trajforge.collectors.policies.base import is_unparseable
from trajforge.collectors.tasks import Suite, load_suite, task_split
from trajforge.sandboxes.base import Task
from trajforge.schemas.splits import SplitConfig, readable_by
from trajforge.training.gspo import sequence_logprobs
from trajforge.training.metrics_log import MetricsLog
from trajforge.training.optimization import Optimizer, checkpoint_due
from trajforge.training.rl import Rollouts, require_sampling, update_means, update_policy


def trainable_tasks(suites: list[Suite], split: SplitConfig) -> list[tuple[Suite, Task]]:
    """The suites' tasks that RL may train on (training split, with a check to reward); ValueError when none is."""
    tasks = [(s, t) for s in suites for t in s.tasks if readable_by(task_split(s, t, split), "rl")]
    checked = [(s, t) for s, t in tasks if t.check is not None]
    if not checked:
        names = ", ".join(s.name for s in suites)
        raise ValueError(
            f"agent-rl has no trainable tasks in {names}: of {sum(len(s.tasks) for s in suites)} tasks, "
            f"{len(tasks)} are in the training split and {len(checked)} of those have a check to reward"
        )
    return checked


def episode_environments(suites: list[Suite], config: AgentRLConfig, run_id: str, log, warn):
    """How each episode gets its own environment: the Docker daemon and image when a suite needs them, and what
    each suite's environment needs before its first episode (as `collect` prepares them)."""
    run = config.run
    client, image = None, run.image
    if any(s.environment.needs_docker() for s in suites):
        client, docker_config = start_docker(run.image, log)
        image = docker_config["image"]
    settings = Settings(run_id=run_id, image=image, command_timeout=run.command_timeout, docker_client=client)
    prepare_environments(suites, settings, warn)
    return lambda spec: build_environment(spec.environment, settings, spec.faults, spec.seed, spec.control)


def refuse_broken_environments(step: int, rollouts: list[Rollout]) -> None:
    """A ValueError when every episode of a step ended as infra_error: no environment (or world model) let one
    finish, so no step can teach anything; the run stops, saying why, rather than updating on nothing."""
    if rollouts and all(r.trajectory.outcome.status == "infra_error" for r in rollouts):
        raise ValueError(
            f"agent-rl step {step}: every episode ({len(rollouts)}) ended as infra_error, so the run stops; "
            f"the first said: {rollouts[0].trajectory.outcome.error}"
        )


def simulated_suites(suites: list[Suite], config: AgentRLConfig, run_id: str, log) -> list[Suite]:
    """The suites in the world model of `config.simulation`, grounded in their real starting states, each episode
    under a control spec sampled from the simulation's control, as `collect --world-model` runs them; the suites as
    they are without a simulation."""
    if config.run.simulation is None:
        return suites
    return in_world_model(suites, config.run, run_id, log)


PREFLIGHT_TRAJECTORIES = 20  # a quick look before training; `trajforge sim-check` measures every figure


def preflight(config: AgentRLConfig, log, warn) -> dict | None:
    """The world model's single-step figures before an RL run in it, on the validation turns of at most
    PREFLIGHT_TRAJECTORIES validation trajectories (None for a real run, or without a corpus)."""
    if config.run.simulation is None:
        return None
    from trajforge.agents.sim_preflight import world_model_figures

    thresholds = Thresholds(exact_match=config.min_exact_match)
    report = Path(config.output) / "world-model-check.json"
    return world_model_figures(config.run.simulation, config.sim_check_corpus, thresholds, log, warn,
                               PREFLIGHT_TRAJECTORIES, report)  # fmt: skip


def group_batch(rollouts: list[Rollout], pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """A group's episodes as right-padded ids [G, T] and the mask of the agent's tokens among ids[:, 1:]."""
    streams = [r.transcript.stream() for r in rollouts]
    width = max(len(ids) for ids, _ in streams)
    ids = torch.full((len(streams), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(streams), width))
    for row, (stream_ids, stream_mask) in enumerate(streams):
        ids[row, : len(stream_ids)], mask[row, : len(stream_mask)] = stream_ids, stream_mask
    return ids.to(device), mask[:, 1:].to(device)


def training_groups(model, groups: list[list[Rollout]], pad_id: int, reference=None) -> Rollouts:
    """Per task, its trainable episodes as one group of training/rl.py's Rollouts (ids, mask, the sampling policy's
    log-probs, for a guide those agents/guidance.py's `behaviour_logprobs` gives, and the reference model's when
    there is one, rewards); a task left with fewer than two is skipped.
    A group of equal rewards without a reference model has nothing to learn (the update leaves it out): its
    log-probs are not computed (None)."""
    device = next(model.parameters()).device
    out = Rollouts()
    for group in groups:
        kept = [r for r in group if r.trainable]
        if len(kept) < 2:
            continue
        rewards = [r.reward for r in kept]
        ids, mask = group_batch(kept, pad_id, device)
        old = ref = None
        if len(set(rewards)) > 1 or reference is not None:
            with torch.no_grad():
                old = sequence_logprobs(model, ids, mask)
                ref = sequence_logprobs(reference, ids, mask) if reference is not None else None
            out.guide_probabilities += guide_probabilities(kept, old, mask)
            old = behaviour_logprobs(kept, old)
        out.groups.append((ids, mask, old, ref))
        out.rewards.append(rewards)
    return out


def step_metrics(step: int, groups: list[list[Rollout]], trained: Rollouts, stats: list, timing: dict) -> dict:
    """A step's line in metrics.jsonl: the policy's own episodes (a guide's are counted in `guided_groups` only)."""
    episodes = [r for g in groups for r in g if not r.guided]
    agents = [r for r in episodes if r.trainable]
    outcomes = Counter(r.trajectory.outcome.status for r in episodes)
    unparseable = sum(is_unparseable(r.trajectory.outcome) for r in episodes)
    rewards = trained.rewards
    generated = sum(r.transcript.generated for r in episodes if r.transcript is not None)
    guided, probabilities = sum(any(r.guided for r in g) for g in groups), trained.guide_probabilities
    return {
        "step": step,
        "success": sum(r.reward for r in agents) / len(agents) if agents else 0.0,
        "degenerate_groups": sum(len(set(g)) == 1 for g in rewards) / len(rewards) if rewards else 1.0,
        "skipped_groups": len(groups) - len(rewards),
        "guided_groups": guided,
        "guided_share": guided / len(groups) if groups else 0.0,
        "guide_probability": sum(probabilities) / len(probabilities) if probabilities else None,
        **update_means(stats),
        "lr": timing["lr"],
        "episodes": len(episodes),
        "outcomes": dict(sorted(outcomes.items())),
        "unparseable": unparseable / len(episodes),
        "mean_turns": sum(len(r.trajectory.turns) for r in episodes) / len(episodes),
        "generated_tokens": generated,
        "tokens_per_s": generated / max(timing["rollout_seconds"], 1e-9),
        "episodes_per_min": 60 * len(episodes) / max(timing["rollout_seconds"], 1e-9),
        "rollout_seconds": timing["rollout_seconds"],
        "seconds": timing["seconds"],
    }


class AgentRL:
    """One agent-RL run: the policy (its Actor: model, tokenizer, chat format, batching), the optimizer, the tasks
    and how episodes get environments."""

    def __init__(self, config: AgentRLConfig, log=print, warn=print):
        if config.init is None:
            raise ValueError("train agent-rl needs --init: a checkpoint that can act (e.g. after agent-sft)")
        gspo = config.gspo
        require_sampling(gspo.temperature)
        check_guide(config.guide)
        if config.run.simulation is None:
            for flag, given in (("--audit-every", config.audit_every), ("--sim-check-corpus", config.sim_check_corpus)):
                if given:
                    raise ValueError(f"{flag} measures a world model: give --world-model")
        self.config, self.folder, self.log, self.warn = config, acting_folder(config.init), log, warn
        self.output = Path(config.output)
        self.real_suites = [load_suite(s) for s in config.run.suites]
        suites = simulated_suites(self.real_suites, config, f"agent-rl-{self.output.name}", log)
        self.tasks = trainable_tasks(suites, config.split)
        self.actor = Actor.load(self.folder, trained=True, temperature=gspo.temperature)
        self.reference = copy.deepcopy(self.actor.model).eval() if gspo.kl_coef else None  # the starting model
        self.optimizer = Optimizer(self.actor.model, gspo.lr, 0, config.max_steps, 0.0, gspo.clip, lr_floor=1.0)
        self.output.mkdir(parents=True, exist_ok=True)
        self.make_env = episode_environments(suites, config, f"agent-rl-{self.output.name}", log, warn)

    def step_tasks(self, step: int) -> list[tuple[Suite, Task]]:
        """The tasks of step `step` (0-based): a seeded order over the trainable tasks, cycled; no task twice in a
        step (its episodes' keys would collide)."""
        order = torch.randperm(len(self.tasks), generator=torch.Generator().manual_seed(self.config.run.seed)).tolist()
        count = min(self.config.tasks_per_step, len(order))
        return [self.tasks[order[(step * count + i) % len(order)]] for i in range(count)]

    def rollouts(self, step: int) -> tuple[list[list[Rollout]], float]:
        """G episodes of each of the step's tasks, all run together; the seconds they took."""
        c, g = self.config, self.config.gspo.group_size
        groups = plan_groups(self.step_tasks(step), g, c.run.seed, tag=f"step{step + 1}")
        started = time.perf_counter()
        self.actor.model.eval()
        run_dir = self.output / "episodes" / f"step-{step + 1:05d}"
        specs = [s for g in groups for s in g]
        flat, _ = run_rollouts(specs, self.actor, self.make_env, run_dir, self.folder, c.run.concurrency,
                               c.run.max_turns, c.gspo.max_new_tokens)  # fmt: skip
        return [flat[i : i + g] for i in range(0, len(flat), g)], time.perf_counter() - started

    def step(self, step: int) -> dict:
        """Roll out, update, and the step's metrics (`step` is the number of steps done before it)."""
        started = time.perf_counter()
        groups, rollout_seconds = self.rollouts(step)
        refuse_broken_environments(step + 1, [r for g in groups for r in g])
        if self.config.guide != "none":
            folder = self.output / "episodes" / f"step-{step + 1:05d}-guides"
            actor, c = self.actor, self.config
            add_guides(groups, self.make_env, folder, actor.tokenizer, actor.window, c.run.concurrency, c.run.max_turns,
                       weighted=c.guide == "scripted-weighted")  # fmt: skip
        pad = self.actor.tokenizer.pad_token_id if self.actor.tokenizer.pad_token_id is not None else 0
        trained = training_groups(self.actor.model, groups, pad, self.reference)
        stats = update_policy(self.actor.model, self.optimizer, trained, self.config.gspo)
        timing = {"lr": self.optimizer.lr, "rollout_seconds": rollout_seconds, "seconds": time.perf_counter() - started}
        metrics = step_metrics(step + 1, groups, trained, stats, timing)
        if metrics["degenerate_groups"] >= self.config.gspo.degenerate_warning:
            metrics["warning"] = (
                f"{metrics['degenerate_groups']:.0%} of groups have equal rewards (no gradient) at success "
                f"{metrics['success']:.0%}: start from a better agent (agent-sft), or raise --group-size"
            )
        if audit_due(step + 1, self.config.audit_every):
            metrics["audit"] = self.audit(step + 1, [r.trajectory for g in groups for r in g if not r.guided])
        return metrics

    def audit(self, step: int, simulated: list) -> dict:
        """The step's simulated episodes replayed in the real environment (agents/reward_audit.py)."""
        c = self.config
        run = dataclasses.replace(c.run, output=str(self.output / "audit"), run_id=f"step-{step:05d}", simulation=None)
        audit = audit_rewards(self.real_suites, simulated, run, self.log, self.warn)
        floor = Thresholds().success_agreement
        if audit["agreement"] is not None and audit["agreement"] < floor:
            self.warn(f"warning: step {step}: the world model's reward was the real outcome in "
                      f"{audit['agreement']:.0%} of the step's episodes (below {floor:.0%}): the agent is also "
                      "learning what the simulator gets wrong")  # fmt: skip
        return audit

    def save(self, step: int, metrics: dict) -> None:
        info = {
            "stage": "agent-rl",
            "init": self.folder,
            "chat_format": self.actor.chat.name,
            "context_length": self.actor.window,
            "agent_rl": self.config.as_dict(),
            "metrics": metrics,
        }
        self.optimizer.save(self.output, step, info, self.actor.tokenizer)


def run_agent_rl(config: AgentRLConfig, progress=None, log=print, warn=print) -> dict:
    """Train; the last step's metrics (only `step` when the run folder was already at max_steps)."""
    run = AgentRL(config, log, warn)
    step = run.optimizer.resume(run.output)
    if step < config.max_steps:
        preflight(config, log, warn)
    last: dict = {"step": step}
    with MetricsLog(run.output, config.report_to, resumed_from=step) as metrics:
        while step < config.max_steps:
            last = run.step(step)
            step += 1
            metrics.write(last)
            if progress is not None:
                progress(last)
            if checkpoint_due(step, config.save_every, config.max_steps):
                run.save(step, last)
    return last
