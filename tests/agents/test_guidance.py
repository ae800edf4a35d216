"""agent-rl --guide scripted: a group whose episodes all failed gets the task's scripted episode, whose tokens are its
agent render with the actions in the mask; the step's figures stay the policy's own."""

import json
from dataclasses import replace

import pytest
import torch
from transformers import AutoModelForCausalLM
from typer.testing import CliRunner

from tests.builders import agent_rl_of, make_trajectory
from tests.collectors.fakes import FakeEnvironment
from trajforge.agents import rl
from trajforge.agents.config import AgentRLConfig
from trajforge.agents.guidance import GuideTranscript, check_guide
from trajforge.agents.rollouts import Rollout
from trajforge.collectors.tasks import load_suite
from trajforge.pipelines.cli import app
from trajforge.schemas.actions import write_action
from trajforge.schemas.records import Action
from trajforge.schemas.sources import read_records
from trajforge.schemas.splits import SplitConfig
from trajforge.training.agent_render import DONE_ANSWER
from trajforge.training.gspo import gspo_loss, sequence_logprobs
from trajforge.training.tokenizer import load_tokenizer

SUITE = """
suite: toy-guided
domain: terminal
tasks:
  - id: touch-it
    instruction: Create the file answer.txt.
    actions: [ls, touch answer.txt]
    check: answer.txt
  - id: unsolvable
    instruction: Create the file other.txt.
    actions: [ls]
    check: other.txt
"""


def _config(tmp_path, tiny_agent, **changes) -> AgentRLConfig:
    tmp_path.mkdir(parents=True, exist_ok=True)
    suite = tmp_path / "toy.yaml"
    suite.write_text(SUITE)
    settings = dict(
        suites=(str(suite),), output=str(tmp_path / "run"), init=str(tiny_agent), tasks_per_step=2,
        gspo=replace(AgentRLConfig.gspo, group_size=3, max_new_tokens=8, lr=1e-2), max_turns=3, max_steps=1,
        save_every=1, split=SplitConfig(held_out=0.0, validation=0.0),
    )  # fmt: skip
    return agent_rl_of(**{**settings, **changes})


def test_a_guide_joins_only_the_group_it_can_rescue_and_gives_it_a_gradient(tmp_path, tiny_agent, monkeypatch):
    monkeypatch.setattr(rl, "episode_environments", lambda *a: lambda spec: FakeEnvironment())
    unguided = rl.run_agent_rl(_config(tmp_path / "a", tiny_agent))  # the untrained model never touches the file
    assert unguided["success"] == 0.0 and unguided["degenerate_groups"] == 1.0 and unguided["loss"] is None
    assert unguided["guided_groups"] == 0 and unguided["guided_share"] == 0.0
    assert unguided["guide_probability"] is None
    guided = rl.run_agent_rl(_config(tmp_path / "b", tiny_agent, guide="scripted"))
    # touch-it's scripted episode succeeds and joins its group; unsolvable's fails and does not
    assert guided["guided_groups"] == 1 and guided["degenerate_groups"] == 0.5 and guided["loss"] is not None
    assert guided["guided_share"] == 0.5 and 0.0 < guided["guide_probability"] < 1.0  # untrained: implausible
    assert guided["episodes"] == 6 and guided["success"] == 0.0  # the policy's own episodes only
    guides = tmp_path / "b" / "run" / "episodes" / "step-00001-guides"  # kept as raw trajectories, both
    records = [r.record for r in read_records(sorted(str(p) for p in guides.glob("segment-*")))]
    assert sorted((r.source.origin.split("#")[0], r.outcome.status) for r in records) == [
        ("toy-guided/touch-it", "success"), ("toy-guided/unsolvable", "failure")]  # fmt: skip


def test_a_guides_mask_covers_its_actions_and_the_done_answer(tiny_agent):
    tokenizer = load_tokenizer(str(tiny_agent))
    actions = [Action(kind="shell", content="ls"), Action(kind="shell", content="touch answer.txt")]
    turns = [{"index": i, "action": a.model_dump(), "observation": {"content": f"ran {a.content}"}}
             for i, a in enumerate(actions)]  # fmt: skip
    trajectory = make_trajectory(turns=turns, outcome={"status": "success"})
    guide = GuideTranscript.of(trajectory, tokenizer)
    ids, mask = guide.stream()
    assert len(ids) == len(mask) and guide.generated == int(mask.sum()) > 0
    learned = tokenizer.decode(ids[mask.bool()].tolist())
    expected = "".join(f"{write_action(a)}<|end|>" for a in actions) + f"{DONE_ANSWER}<|end|>"
    assert learned.replace(" ", "") == expected.replace(" ", "")
    assert "ran ls" not in learned  # observations are context only


def test_an_unknown_guide_is_a_clear_error(tmp_path, tiny_agent):
    with pytest.raises(ValueError, match="--guide 'teacher': expected one of none, scripted, scripted-weighted"):
        check_guide("teacher")
    with pytest.raises(ValueError, match="--guide"):
        rl.AgentRL(_config(tmp_path, tiny_agent, guide="teacher"))


def _episode(tokenizer, status: str, guided: bool = False, weighted: bool = False) -> Rollout:
    turns = [{"index": 0, "action": {"kind": "shell", "content": "touch answer.txt"}, "observation": {"content": "ok"}}]
    trajectory = make_trajectory(turns=turns, outcome={"status": status})
    return Rollout(None, trajectory, GuideTranscript.of(trajectory, tokenizer, weighted), guided=guided)


@pytest.mark.parametrize("guide", ["scripted", "scripted-weighted"])
def test_a_guides_ratio_is_taken_against_the_policy_its_guide_names(tiny_agent, guide):
    model = AutoModelForCausalLM.from_pretrained(str(tiny_agent))
    tokenizer = load_tokenizer(str(tiny_agent))
    weighted = guide == "scripted-weighted"
    group = [_episode(tokenizer, "failure"), _episode(tokenizer, "failure"),
             _episode(tokenizer, "success", guided=True, weighted=weighted)]  # fmt: skip
    trained = rl.training_groups(model, [group], pad_id=0)
    ids, mask, old, _ = trained.groups[0]
    with torch.no_grad():
        policy = sequence_logprobs(model, ids, mask)
    assert torch.equal(old[:2], policy[:2])  # the policy's own episodes: against the policy that sampled them
    (probability,) = trained.guide_probabilities  # the guide's geometric-mean token probability under the policy
    expected = float(torch.exp((policy[2] * mask[2]).sum() / mask[2].sum()))
    assert probability == pytest.approx(expected) and 0.0 < probability < 0.5  # an untrained policy
    ratio = gspo_loss(policy, old, mask, torch.tensor([-0.7, -0.7, 1.4])).ratios[2]
    if weighted:  # against the scripted policy (probability 1): the policy's own probability of the demonstration
        assert torch.equal(old[2], torch.zeros_like(old[2])) and float(ratio) == pytest.approx(probability)
    else:  # a demonstration step: against the current policy, as if it had sampled it
        assert torch.equal(old[2], policy[2]) and float(ratio) == pytest.approx(1.0)


def test_guided_and_unguided_runs_from_one_start_draw_the_same_tasks_and_episodes(tmp_path, tiny_agent, monkeypatch):
    monkeypatch.setattr(rl, "episode_environments", lambda *a: lambda spec: FakeEnvironment())
    planned: dict[str, list] = {}
    plan = rl.plan_groups

    def recording(tasks, group_size, seed, tag):
        groups = plan(tasks, group_size, seed, tag)
        planned.setdefault(current, []).append([(s.key, s.seed) for g in groups for s in g])
        return groups

    monkeypatch.setattr(rl, "plan_groups", recording)
    suite = SUITE + "".join(
        f"  - id: touch-{i}\n    instruction: Create f{i}.\n    actions: [touch f{i}]\n    check: f{i}\n"
        for i in range(3)
    )
    for current in ("none", "scripted", "scripted-weighted"):
        config = _config(tmp_path / current, tiny_agent, guide=current, tasks_per_step=1, max_steps=4, seed=3)
        (tmp_path / current / "toy.yaml").write_text(suite)  # five tasks
        rl.run_agent_rl(config)
    metrics = {g: [json.loads(x) for x in (tmp_path / g / "run" / "metrics.jsonl").read_text().splitlines()]
               for g in planned}  # fmt: skip
    assert sum(m["guided_groups"] for m in metrics["scripted"]) >= 2  # the guides joined: the runs differ
    assert sum(m["guided_groups"] for m in metrics["none"]) == 0
    assert planned["none"] == planned["scripted"] == planned["scripted-weighted"]  # tasks, order, episode seeds
    assert len({keys[0][0].split("#")[0] for keys in planned["none"]}) == 4  # each step drew another task


@pytest.mark.slow
def test_cli_guides_a_failed_group_with_the_scripted_episode_in_docker(tmp_path, tiny_agent, sandbox_image):
    suite = tmp_path / "one.yaml"
    suite.write_text(
        "suite: one\ndomain: terminal\ntasks:\n  - id: write-7\n    instruction: Write 7 to answer.txt.\n"
        '    actions: [echo 7 > answer.txt]\n    check: test "$(cat answer.txt)" = 7\n'
    )
    assert load_suite(str(suite)).tasks[0].actions
    args = ["train", "agent-rl", "--suite", str(suite), "--init", str(tiny_agent), "-o", str(tmp_path / "r")]
    args += ["--group-size", "2", "--tasks-per-step", "1", "--max-turns", "2", "--max-steps", "1", "--held-out", "0"]
    result = CliRunner().invoke(app, [*args, "--max-new-tokens", "16", "--guide", "scripted"])
    assert result.exit_code == 0, result.output
    (metrics,) = [json.loads(x) for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    assert metrics["success"] == 0.0 and metrics["guided_groups"] == 1  # the real check passed the guide's episode
    assert metrics["degenerate_groups"] == 0.0 and metrics["loss"] is not None
