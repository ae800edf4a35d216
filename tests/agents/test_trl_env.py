"""TRL's GRPOTrainer trains through `trl_environment`: TRL's own tool loop calls the suite's tools, its reward is the
task's check, in a real Docker terminal and in a world model (the tiny checkpoint).

The tiny random model writes no tool call, so its answers are scripted (its `generate` is replaced; TRL still scores
those ids with the model and updates it): in each group of four, two rollouts run the command that solves the task
and say they are done, two say they are done at once. Everything else is TRL's (its chat template handling, its
tool-call parsing, its tool loop, its rewards) and ours (sandboxes, checks)."""

from pathlib import Path

import pytest
import torch
import trl

from trajforge.agents.trl_env import TRLEnvironment, tool_method, trl_dataset, trl_environment
from trajforge.sandboxes import keystrokes
from trajforge.sandboxes.terminal import SHELL_TOOL

SOLVE = '<tool_call>\n{"name": "shell", "arguments": {"command": "wc -l < notes.txt > answer.txt"}}\n</tool_call>'
DONE = "Done."
TEXTS = [SOLVE, DONE, "total 4\n-rw-r--r-- 1 agent agent 12 notes.txt\n", "Count the lines of notes.txt"] * 20


@pytest.fixture(scope="module")
def tiny_tool_agent(tmp_path_factory) -> Path:
    """A random tiny model whose tokenizer has a chat template TRL parses tool calls from (Qwen3's, TRL's copy)."""
    from trajforge.training.model import TinyModelConfig, build_tiny_model
    from trajforge.training.tokenizer import train_tokenizer

    folder = tmp_path_factory.mktemp("tiny-trl-agent")
    tokenizer = train_tokenizer(TEXTS, vocab_size=400)
    tokenizer.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()
    config = TinyModelConfig(hidden_size=32, intermediate_size=64, layers=2, heads=2, max_positions=2048)
    build_tiny_model(config, tokenizer, seed=0).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def scripted(model, tokenizer):
    """Replace the model's `generate`: row i of a first turn solves the task when i is even, else ends at once;
    after a tool's answer every row is done."""

    def generate(input_ids, attention_mask, **kwargs):
        answers = []
        for row, (ids, mask) in enumerate(zip(input_ids, attention_mask, strict=True)):
            prompt = tokenizer.decode(ids[mask.bool()])
            text = DONE if "<tool_response>" in prompt else (SOLVE if row % 2 == 0 else DONE)
            answers.append(
                tokenizer(text + "<|im_end|>", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            )
        width = max(map(len, answers))
        padded = [answer + [tokenizer.pad_token_id] * (width - len(answer)) for answer in answers]
        return torch.cat([input_ids, torch.tensor(padded, dtype=input_ids.dtype)], dim=1)

    model.generate = generate


class RecordingTrainer(trl.GRPOTrainer):
    """GRPOTrainer, keeping the rewards it computed (the environment's column) beside the episodes' outcomes."""

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        column = self.reward_func_names.index(type(self.environments[0]).__name__)
        self.seen.append((rewards[:, column].tolist(), [dict(e.outcome) for e in self.environments]))
        return rewards


def train_two_steps(environment: type[TRLEnvironment], agent: Path, output: Path) -> RecordingTrainer:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(agent))
    model = AutoModelForCausalLM.from_pretrained(str(agent))
    scripted(model, tokenizer)
    config = trl.GRPOConfig(
        output_dir=str(output), max_steps=2, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=512, learning_rate=1e-2, report_to="none", use_cpu=True, bf16=False,
        save_strategy="no", logging_steps=1, beta=0.0,
    )  # fmt: skip
    trainer = RecordingTrainer(
        model=model, args=config, train_dataset=trl_dataset(environment, repeats=8), processing_class=tokenizer,
        environment_factory=environment,
    )  # fmt: skip
    trainer.seen = []
    before = {k: v.clone() for k, v in model.state_dict().items()}
    trainer.train()
    assert trainer.state.global_step == 2
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())  # the weights moved
    return trainer


def verdicts(trainer) -> list[tuple[list[float], list[float], list[str]]]:
    return [
        (rewards, [o["reward"] for o in outcomes], [o["status"] for o in outcomes])
        for rewards, outcomes in trainer.seen
    ]


def test_a_tool_method_has_the_schema_trl_and_transformers_read_from_it():
    from transformers.utils import get_json_schema

    for tool in (SHELL_TOOL, keystrokes.TOOL):
        read = get_json_schema(tool_method(tool))["function"]
        assert read["name"] == tool["name"] and read["description"] == tool["description"]
        schema = tool["input_schema"]
        assert set(read["parameters"]["properties"]) == set(schema["properties"])
        assert set(read["parameters"].get("required", [])) == set(schema["required"])
        assert {k: v["type"] for k, v in read["parameters"]["properties"].items()} == {
            k: v["type"] for k, v in schema["properties"].items()
        }
    with pytest.raises(ValueError, match="reset"):
        tool_method({"name": "reset", "input_schema": {"type": "object", "properties": {}}})


@pytest.mark.slow
def test_grpo_trains_through_a_docker_terminal_and_is_rewarded_by_the_check(docker_client, tiny_tool_agent, tmp_path):
    environment = trl_environment("terminal", tasks=("count-lines",), log=lambda text: None)
    assert {"shell", "keystrokes"} <= set(vars(environment))  # the terminal's tools, as methods TRL offers
    trainer = train_two_steps(environment, tiny_tool_agent, tmp_path)
    assert len(trainer.seen) == 2
    for rewards, ours, statuses in verdicts(trainer):
        assert rewards == ours == [1.0, 0.0, 1.0, 0.0]  # what TRL received is what the checks decided
        assert statuses == ["success", "failure", "success", "failure"]
    outcome = trainer.seen[0][1][0]
    assert outcome["task_id"] == "count-lines" and "real environment" in outcome["check"]["decided_by"]
    logged = [h["rewards/TrajforgeTerminalEnvironment/mean"] for h in trainer.state.log_history if "loss" in h]
    assert logged == [0.5, 0.5]


# The check passes on the starting state: an episode that answers at once is decided there (no action could change
# it); one that ran a command that writes is decided by the world model.
KEEP_NOTES = """
suite: keep-notes
domain: terminal
tasks:
  - id: keep-notes
    instruction: Make sure notes.txt still says milk, then say you are done.
    files:
      notes.txt: "milk"
    check: test "$(cat notes.txt)" = milk
"""


@pytest.mark.slow
def test_grpo_trains_in_a_world_model_and_is_rewarded_by_the_check_in_it(
    docker_client, tiny_tool_agent, tiny_checkpoint, tmp_path
):
    (tmp_path / "keep-notes.yaml").write_text(KEEP_NOTES)
    environment = trl_environment(
        str(tmp_path / "keep-notes.yaml"), str(tiny_checkpoint), prompt="plain", max_tokens=8, log=lambda text: None
    )
    trainer = train_two_steps(environment, tiny_tool_agent, tmp_path / "run")
    assert [rewards for rewards, _, _ in verdicts(trainer)] == [[0.0, 1.0, 0.0, 1.0]] * 2
    for rewards, ours, statuses in verdicts(trainer):
        assert rewards == ours  # what TRL received is what the checks decided
        assert statuses == ["failure", "success", "failure", "success"]
    for _, outcomes in trainer.seen:
        decided = [o["check"]["decided_by"] for o in outcomes]
        # answered at once: the check on the real starting state (the world model is not asked)
        assert "real starting state" in decided[1] and "real starting state" in decided[3]
        # ran a command that writes: the check in the world model, where the tiny model never shows `milk`
        assert "in the world model" in decided[0] and "in the world model" in decided[2]


@pytest.mark.slow
def test_an_mcp_suite_offers_its_servers_tools_as_methods_that_call_the_server(docker_client):
    from transformers.utils import get_json_schema

    environment = trl_environment("mcp-kvstore", tasks=("bump-pool",), log=lambda text: None)
    assert {"get", "set", "list_keys", "delete"} <= set(vars(environment))  # read from the server, typed from it
    assert "expected_version" in get_json_schema(environment.set)["function"]["parameters"]["properties"]
    rollout = environment()
    rollout.reset(task_id="bump-pool")
    assert '\\"version\\": 1' in rollout.get(key="db/pool_size")  # TRL calls it so: name(**arguments)
    assert '"isError": true' in rollout.set(key="db/pool_size", value="20", expected_version=2)  # a stale version
    assert rollout.get_reward() == 0.0 and rollout.outcome["status"] == "failure"  # the check: still not 20
    rollout.reset(task_id="bump-pool")
    rollout.set(key="db/pool_size", value="20", expected_version=1)
    assert rollout.get_reward() == 1.0 and rollout.outcome["status"] == "success"
    assert "no action is taken" in rollout.get(key="db/pool_size")  # the episode has ended
