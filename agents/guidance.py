"""Off-policy guidance for agent RL (`--guide scripted`): a task group in which every episode of the policy failed
has equal rewards, so it teaches nothing, however many steps see it. With guidance, one episode of the task's
scripted solution (model-free; run like any episode, in its own environment, and kept as a raw trajectory) joins
such a group when it succeeds, so the group holds a success whose advantage is positive and the policy's own
failures get negative ones. This is the mixed-policy group of LUFFY (arXiv 2504.14945) with the suite's scripted
actions as the off-policy teacher.

The guide's tokens are its trajectory in the agent render (training/agent_render.py: the layout agent SFT trains
on, the actions and their ends of turn in the mask), not generated ones. Its "old" log-probs are the current
policy's, computed with the group's, so its ratio starts at 1 and the update on it is a length-normalised
likelihood step scaled by its advantage. A guide longer than the policy's context window is left out. Every figure
a step reports about the policy (success, turns, tokens) counts the policy's own episodes only."""

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from trajforge.agents.rollouts import KeepingWriter, Rollout
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.runner import run_collection
from trajforge.schemas.records import Trajectory
from trajforge.training.agent_render import agent_chat, render_agent_row
from trajforge.training.labels import IGNORE_INDEX, label_document

GUIDES = ("none", "scripted")  # --guide


@dataclass(frozen=True)
class GuideTranscript:
    """A guide episode's tokens: the agent render of its trajectory, the mask 1 on its actions' tokens."""

    ids: torch.Tensor
    mask: torch.Tensor

    @classmethod
    def of(cls, trajectory: Trajectory, tokenizer) -> "GuideTranscript":
        tokens = label_document(render_agent_row(trajectory, chat=agent_chat(tokenizer)), tokenizer)
        ids = torch.as_tensor(tokens.input_ids, dtype=torch.long)
        return cls(ids, (torch.as_tensor(tokens.labels) != IGNORE_INDEX).float())

    def stream(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.ids, self.mask

    @property
    def generated(self) -> int:
        """The tokens in the loss (none of them sampled)."""
        return int(self.mask.sum())


def needs_guide(group: list[Rollout]) -> bool:
    """Whether the policy's trainable episodes of a task all failed (equal rewards of 0: no gradient)."""
    kept = [r for r in group if r.trainable]
    return bool(kept) and not any(r.reward for r in kept)


def check_guide(guide: str) -> None:
    if guide not in GUIDES:
        raise ValueError(f"--guide {guide!r}: expected one of {', '.join(GUIDES)}")


def add_guides(groups: list[list[Rollout]], make_env, run_dir: Path, tokenizer, window: int, concurrency: int,
               max_turns: int) -> None:  # fmt: skip
    """One scripted episode per group that needs a guide (all run together); each that succeeds and fits the
    window joins its group, marked `guided` (step_metrics counts them from there)."""
    needing = [g for g in groups if needs_guide(g)]
    if not needing:
        return
    specs = [replace(g[0].spec, key=g[0].spec.key.rsplit(".", 1)[0] + ".guide") for g in needing]
    shutil.rmtree(run_dir, ignore_errors=True)  # a step run again writes its guides afresh
    writer = KeepingWriter(run_dir)
    run_collection(specs, writer, make_env, ScriptedPolicy, run_dir.name, concurrency, retries=1, max_turns=max_turns)
    for group, spec in zip(needing, specs, strict=True):
        trajectory = writer.kept.get(spec.key)
        if trajectory is None or trajectory.outcome.status != "success":
            continue
        transcript = GuideTranscript.of(trajectory, tokenizer)
        if len(transcript.ids) > window:
            continue
        group.append(Rollout(spec, trajectory, transcript, guided=True))
