"""Guidance for agent RL (`--guide`): a task group in which every episode of the policy failed has equal rewards,
so it teaches nothing, however many steps see it. With a guide, one episode of the task's scripted solution
(model-free; run like any episode, in its own environment, and kept as a raw trajectory) joins such a group when it
succeeds, so the group holds a success whose advantage is positive and the policy's own failures get negative
ones: LUFFY's mixed-policy group (arXiv 2504.14945) with the suite's scripted actions as the teacher.

The guide's tokens are its trajectory in the agent render (training/agent_render.py: the layout agent SFT trains
on, the actions and their ends of turn in the mask), not generated ones. What its GSPO ratio is taken against is
what the two guides differ in:

- `scripted`, a demonstration step inside the GSPO update: its "old" log-probs are the current policy's, computed
  with the group's, as if the policy had sampled it, so its ratio starts at 1 and the term is the demonstration's
  length-normalised log-likelihood weighted by its group advantage (advantage-weighted SFT), clipped like the
  policy's own samples; nothing accounts for the policy not having produced it.
- `scripted-weighted`, an importance-weighted off-policy sample: its "old" log-probs are those of the policy that
  produced it, the scripted one, which is deterministic (probability 1, log-prob 0 per token). GSPO's sequence
  ratio against it is the current policy's geometric-mean token probability of the demonstration, s in (0, 1],
  the same length-normalised importance weight each of the policy's own episodes gets against the policy that
  sampled it, so the guide's term is s x its advantage: a demonstration counts as much as the policy already finds
  it plausible (LUFFY's behaviour probability 1, at GSPO's sequence level), its weight at most 1.

A guide longer than the policy's context window is left out. Every figure a step reports about the policy
(success, turns, tokens) counts the policy's own episodes only; `guided_groups` and `guided_share` say how often a
guide joined, `guide_probability` how plausible the joined guides were to the policy at the step's start."""

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

GUIDES = ("none", "scripted", "scripted-weighted")  # --guide


@dataclass(frozen=True)
class GuideTranscript:
    """A guide episode's tokens: the agent render of its trajectory, the mask 1 on its actions' tokens."""

    ids: torch.Tensor
    mask: torch.Tensor
    weighted: bool = False  # its ratio against the scripted policy that produced it (module docstring)

    @classmethod
    def of(cls, trajectory: Trajectory, tokenizer, weighted: bool = False) -> "GuideTranscript":
        tokens = label_document(render_agent_row(trajectory, chat=agent_chat(tokenizer)), tokenizer)
        ids = torch.as_tensor(tokens.input_ids, dtype=torch.long)
        return cls(ids, (torch.as_tensor(tokens.labels) != IGNORE_INDEX).float(), weighted)

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
               max_turns: int, weighted: bool = False) -> None:  # fmt: skip
    """One scripted episode per group that needs a guide (all run together); each that succeeds and fits the
    window joins its group, marked `guided` (step_metrics counts them from there); `weighted`: importance-weighted
    against the scripted policy (`--guide scripted-weighted`) rather than a demonstration step."""
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
        transcript = GuideTranscript.of(trajectory, tokenizer, weighted)
        if len(transcript.ids) > window:
            continue
        group.append(Rollout(spec, trajectory, transcript, guided=True))


def guide_probabilities(kept: list[Rollout], old: torch.Tensor, mask: torch.Tensor) -> list[float]:
    """Per guide among a group's episodes (rows of `old`, the policy's log-probs at the step's start): its
    geometric-mean token probability, exp(mean log-prob over its actions' tokens)."""
    rows = [i for i, r in enumerate(kept) if r.guided]
    return [float(torch.exp((old[i] * mask[i]).sum() / mask[i].sum().clamp(min=1))) for i in rows]


def behaviour_logprobs(kept: list[Rollout], old: torch.Tensor) -> torch.Tensor:
    """The group's "old" log-probs with each importance-weighted guide's row the log-probs of the policy that
    produced it: the scripted policy's, 0 on every token (it is deterministic); `old` itself when there is none."""
    rows = [i for i, r in enumerate(kept) if r.guided and r.transcript.weighted]
    if not rows:
        return old
    old = old.clone()
    old[rows] = 0.0
    return old
