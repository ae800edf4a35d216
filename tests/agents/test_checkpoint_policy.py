"""The checkpoint policy: a model acting in the agent role; a bad answer is the agent's error, never a crash; a
checkpoint that cannot act is refused before any episode."""

import json

import pytest
from typer.testing import CliRunner

from tests.collectors.fakes import FakeEnvironment
from trajforge.agents.checkpoint_policy import Actor, CheckpointPolicy, acting_folder
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies import POLICIES
from trajforge.endpoints.model_ref import ModelRef
from trajforge.pipelines.cli import app
from trajforge.sandboxes.base import ShellCheck, Task
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.sources import read_records
from trajforge.training.agent_render import agent_messages, agent_prompt_ids
from trajforge.training.labels import head_length

TASK = Task(id="touch", instruction="Create done.txt.", check=ShellCheck(command="done.txt"))


def _episode(actor):
    policy = CheckpointPolicy("tiny", actor=actor)
    return run_episode(FakeEnvironment(), policy, TASK, "s/touch#0", "run", seed=5, max_turns=4), policy


def test_it_is_a_registered_policy_that_needs_a_checkpoint():
    assert POLICIES.get("checkpoint") is CheckpointPolicy
    with pytest.raises(ValueError, match="needs --agent"):
        CheckpointPolicy.arguments(CollectConfig(policy="checkpoint"))


def test_an_action_is_taken_and_an_answer_without_one_ends_the_episode(scripted_actor):
    trajectory, policy = _episode(scripted_actor(["```bash\ntouch done.txt\n```", "Created it."]))
    assert [t.action.content for t in trajectory.turns] == ["touch done.txt"]
    assert trajectory.outcome.status == "success" and trajectory.agent.name == "checkpoint"
    assert policy.actor.broker._members == 0  # the finished episode left the batch


def test_an_unparseable_answer_ends_the_episode_as_the_agents_error(scripted_actor):
    trajectory, _ = _episode(scripted_actor(["```bash\ntouch done.txt\n```", "```bash\nrm -rf"]))
    assert trajectory.outcome.status == "agent_error" and len(trajectory.turns) == 1
    assert trajectory.outcome.error == "unparseable answer: the ```bash block is not closed"


def test_a_full_context_ends_the_episode_as_a_timeout(scripted_actor):
    actor = scripted_actor(["```bash\necho " + "x" * 3000 + "\n```"])  # each turn outgrows the 1024-token window
    trajectory, _ = _episode(actor)
    assert trajectory.outcome.status == "timeout" and "context window (1024 tokens) is full" in trajectory.outcome.error


def test_a_starting_state_longer_than_the_window_is_fitted_once_and_acted_on(scripted_actor):
    files = {f"data/part-{i:04d}-of-a-long-listing.txt": "" for i in range(300)}
    task = Task(id="touch", instruction="Create done.txt.", files=files, check=ShellCheck(command="done.txt"))
    actor = scripted_actor(["```bash\ntouch done.txt\n```", "Created it."])
    policy = CheckpointPolicy("tiny", actor=actor)
    trajectory = run_episode(FakeEnvironment(), policy, task, "s/touch#0", "run", seed=5, max_turns=4)
    assert trajectory.outcome.status == "success"  # not "the context window is full" before the first action
    messages = agent_messages(task.instruction, trajectory.action_space, (), trajectory.initial_state)
    whole = agent_prompt_ids(actor.tokenizer, messages)
    first = policy.transcript.turns[0].prompt_ids
    assert len(whole) > actor.window and len(first) == actor.window - policy.max_new_tokens
    head = head_length(actor.window)
    assert first[:head] == whole[:head] and first[head:] == whole[len(whole) - len(first) + head :]
    assert actor.tokenizer.decode(first).endswith("# Task\nCreate done.txt.<|end|>\n<|assistant|>")
    ids, mask = policy.transcript.stream()
    assert ids.tolist()[: len(first)] == first and mask[: len(first)].sum() == 0  # the stream is what it read


def test_a_checkpoint_without_chat_template_or_markers_cannot_act(tmp_path, tiny_agent):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel()
    backend.train_from_iterator(["plain text only"] * 10, trainers.BpeTrainer(vocab_size=300, show_progress=False))
    PreTrainedTokenizerFast(tokenizer_object=backend).save_pretrained(str(tmp_path))
    (tmp_path / "config.json").write_text((tiny_agent / "config.json").read_text())
    with pytest.raises(ValueError, match="cannot act: its tokenizer has no chat template and no trajforge chat"):
        acting_folder(str(tmp_path))
    result = CliRunner().invoke(app, ["collect", "--agent", str(tmp_path), "-o", str(tmp_path / "raw")])
    assert result.exit_code == 2 and "cannot act" in result.output
    assert acting_folder(str(tiny_agent)) == str(tiny_agent)


def test_temperature_zero_acts_greedily_whatever_the_episode_seed(tiny_agent):
    config = CollectConfig(agent=ModelRef(weights=str(tiny_agent)), temperature=0.0)
    assert config.policy == "checkpoint"  # the policy weights act through
    arguments = CheckpointPolicy.arguments(config)
    assert arguments["temperature"] == 0.0

    def answers(**settings) -> list[tuple[int, ...]]:
        """The episode's whole token stream (its answers as generated), per episode seed."""
        policy = CheckpointPolicy(**settings)
        streams = []
        for seed in (1, 2, 3):
            run_episode(FakeEnvironment(), policy, TASK, "s/touch#0", "run", seed=seed, max_turns=2)
            streams.append(tuple(policy.transcript.ids))
        return streams

    greedy = answers(**arguments)
    assert len(set(greedy)) == 1  # the same answer for every seed
    sampled = answers(checkpoint=arguments["checkpoint"], temperature=1.0)
    assert len(set(sampled)) > 1  # a random model's sampled answers differ by seed


@pytest.mark.slow
def test_collect_runs_a_random_model_in_docker_and_each_episode_ends_as_an_outcome(tmp_path, tiny_agent, sandbox_image):
    args = ["collect", "-s", "terminal", "--task", "count-lines", "--agent"]
    args += [str(tiny_agent), "--repeats", "3", "--concurrency", "3", "--max-turns", "3", "-o", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, "--run-id", "r"])
    assert result.exit_code == 0, result.output
    records = [r.record for r in read_records([tmp_path / "r"])]
    assert len(records) == 3 and all(r.agent.name == "checkpoint" for r in records)
    # an untrained model mostly writes no action (its check then fails) or a broken one: outcomes, not crashes
    assert {r.outcome.status for r in records} <= {"failure", "agent_error", "timeout"}
    manifest = read_manifest(tmp_path / "r")
    assert manifest.config["policy_args"] == {"checkpoint": str(tiny_agent), "temperature": 0.7}
    assert json.loads(records[0].metadata)["task_id"] == "count-lines"


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the GGUF conversion and 135M parameters on 2 cores
def test_smollm2_acts_in_its_own_chat_template(in_smollm2_folder):
    folder = acting_folder("smollm2")
    actor = Actor.load(folder, temperature=0.0)  # greedy: SmolLM2-Instruct answers this one with a bash block
    assert actor.chat.name.startswith("chat template of") and actor.chat.end_of_turn == "<|im_end|>"
    policy = CheckpointPolicy(folder, actor=actor, max_new_tokens=48)
    trajectory = run_episode(FakeEnvironment(), policy, TASK, "s/touch#0", "run", seed=5, max_turns=2)
    assert trajectory.outcome.status in {"success", "failure", "agent_error", "timeout"}
    first = policy.transcript.turns[0]
    assert actor.tokenizer.decode(first.prompt_ids).endswith("<|im_start|>assistant\n") and first.action_ids
