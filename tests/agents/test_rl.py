"""train agent-rl: multi-turn GSPO over whole episodes, on training-split tasks only, with resume."""

import json
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from tests.builders import agent_rl_of, make_trajectory, simulation_of
from tests.collectors.fakes import FakeEnvironment
from tests.training.test_metrics_log import assert_same_as_jsonl
from trajforge.agents import rl
from trajforge.agents.config import AgentRLConfig, agent_rl_config
from trajforge.collectors.tasks import load_suite
from trajforge.pipelines.cli import app
from trajforge.schemas.splits import SplitConfig, split_of, task_identity


def gspo(**settings):
    """Agent RL's GSPO settings with `settings` changed."""
    return replace(AgentRLConfig.gspo, **settings)


SUITE = """
suite: {name}
domain: terminal
tasks:
{tasks}
"""


def _suite(tmp_path, count: int, name: str = "toy", check: bool = True) -> str:
    tasks = "".join(
        f"  - id: t{i}\n    instruction: Write {i} to answer.txt.\n"
        + (f'    check: test "$(cat answer.txt)" = {i}\n' if check else "")
        for i in range(count)
    )
    path = tmp_path / f"{name}.yaml"
    path.write_text(SUITE.format(name=name, tasks=tasks))
    return str(path)


def test_only_training_split_tasks_are_trained_on_by_the_key_their_episodes_get(tmp_path):
    suite = load_suite(_suite(tmp_path, 40))
    split = SplitConfig(held_out=0.3)
    trained = {t.id for _, t in rl.trainable_tasks([suite], split)}
    for task in suite.tasks:  # a collected episode of the task lands on the same side
        meta = json.dumps({"task_key": task_identity(task.instruction, task.files)})
        source = {"kind": "collected", "by": "scripted", "origin": f"toy/{task.id}#3"}
        record = make_trajectory(source=source, metadata=meta)
        assert (task.id in trained) == (split_of(record.model_dump(), split) not in ("held_out", "validation"))
    assert 0 < len(trained) < 40


def test_a_run_with_no_trainable_task_is_a_clear_error(tmp_path):
    everything_held_out = SplitConfig(held_out=1.0)
    with pytest.raises(ValueError, match="agent-rl has no trainable tasks in toy: of 3 tasks, 0 are in the training"):
        rl.trainable_tasks([load_suite(_suite(tmp_path, 3))], everything_held_out)
    with pytest.raises(ValueError, match="3 are in the training split and 0 of those have a check"):
        rl.trainable_tasks([load_suite(_suite(tmp_path, 3, check=False))], SplitConfig(held_out=0.0, validation=0.0))


def test_a_step_takes_each_task_once_however_few_there_are(tmp_path, tiny_agent, monkeypatch):
    monkeypatch.setattr(rl, "episode_environments", lambda *a: lambda spec: FakeEnvironment())
    config = agent_rl_of(suites=(_suite(tmp_path, 2),), output=str(tmp_path / "run"), init=str(tiny_agent),
                           tasks_per_step=5, split=SplitConfig(held_out=0.0, validation=0.0))  # fmt: skip
    run = rl.AgentRL(config)
    assert sorted(t.id for _, t in run.step_tasks(0)) == ["t0", "t1"] == sorted(t.id for _, t in run.step_tasks(1))


def test_a_run_needs_a_checkpoint_to_start_from():
    with pytest.raises(ValueError, match="train agent-rl needs --init"):
        rl.AgentRL(AgentRLConfig())


def test_the_config_takes_the_train_commands_flags():
    config = agent_rl_config(suite=["terminal", "swe"], init="x", group_size=3, max_turns=2, lr=None)
    assert config.run.suites == ("terminal", "swe") and config.gspo.group_size == 3 and config.run.max_turns == 2
    assert config.run.concurrency == 8  # agent RL's own episodes at once, not collect's
    assert config.gspo.lr == AgentRLConfig.gspo.lr and config.split == SplitConfig()
    assert config.gspo.updates_per_batch == 1 and config.gspo.micro_batch == 2  # agent RL's own, not RL's
    with pytest.raises(ValueError, match="train agent-rl has no use for --batch-size"):
        agent_rl_config(batch_size=4)  # never dropped in silence
    split = agent_rl_config(split_held_out=0.3, split_seed=4, held_out_family=["terminal-text"]).split
    assert split == SplitConfig(held_out=0.3, seed=4, held_out_families=("terminal-text",))
    simulated = agent_rl_config(world_model="wm", simulate_prompt="plain").run.simulation
    assert simulated == simulation_of("wm", prompt="plain")  # collect --world-model's value
    assert agent_rl_config(world_model="wm", simulate_max_tokens=64).run.simulation.max_tokens == 64
    assert agent_rl_config().run.simulation is None
    assert agent_rl_config(temperature=0.5, output="o").gspo.temperature == 0.5  # the policy's, not a collect run's


class _HalfSucceed(FakeEnvironment):
    """Every other episode of a group succeeds, whatever the agent did: rewards that vary within a group."""

    def __init__(self, succeeds: bool):
        super().__init__()
        self.succeeds = succeeds

    def check(self, task) -> bool:
        return self.succeeds


def test_a_step_updates_the_policy_writes_metrics_and_a_rerun_resumes(tmp_path, tiny_agent, monkeypatch):
    monkeypatch.setattr(
        rl, "episode_environments", lambda *a: lambda spec: _HalfSucceed(spec.key.endswith((".0", ".2")))
    )
    config = agent_rl_of(
        suites=(_suite(tmp_path, 2),), output=str(tmp_path / "run"), init=str(tiny_agent),
        gspo=gspo(group_size=4, max_new_tokens=16, lr=1e-2), tasks_per_step=2, max_turns=2, max_steps=1, save_every=1,
        split=SplitConfig(held_out=0.0, validation=0.0), report_to="tensorboard",
    )  # fmt: skip
    last = rl.run_agent_rl(config)
    assert last["step"] == 1 and last["episodes"] == 8 and last["success"] == 0.5
    assert last["degenerate_groups"] == 0.0 and last["loss"] is not None and last["generated_tokens"] > 0
    assert last["episodes_per_min"] > 0 and last["tokens_per_s"] > 0
    before = load_file(str(tiny_agent / "model.safetensors"))
    after = load_file(str(tmp_path / "run" / "checkpoint-1" / "model.safetensors"))
    assert any(not torch.equal(before[k], after[k]) for k in before)
    info = json.loads((tmp_path / "run" / "checkpoint-1" / "checkpoint.json").read_text())
    assert info["stage"] == "agent-rl" and info["agent_rl"]["gspo"]["group_size"] == 4
    assert len(list((tmp_path / "run" / "episodes" / "step-00001").glob("segment-*"))) >= 1
    more = replace(config, max_steps=2, gspo=replace(config.gspo, kl_coef=0.1))
    again = rl.run_agent_rl(more)  # resumes at checkpoint-1: one more step
    steps = [json.loads(line)["step"] for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert again["step"] == 2 and steps == [1, 2] and again["kl"] > 0  # the KL to the starting model, now moved
    assert_same_as_jsonl(tmp_path / "run")  # success, degenerate groups, outcomes/...: both runs' event files
    assert rl.run_agent_rl(replace(config, max_steps=2)) == {"step": 2}  # nothing left to do


@pytest.mark.slow
def test_cli_runs_an_agent_rl_step_in_docker(tmp_path, tiny_agent, sandbox_image):
    suite = _suite(tmp_path, 2)
    args = ["train", "agent-rl", "--suite", suite, "--init", str(tiny_agent), "-o", str(tmp_path / "r")]
    args += ["--group-size", "2", "--tasks-per-step", "1", "--max-turns", "2", "--max-steps", "1"]
    result = CliRunner().invoke(app, [*args, "--max-new-tokens", "16", "--concurrency", "1"])
    assert result.exit_code == 0, result.output
    info = json.loads((tmp_path / "r" / "checkpoint-1" / "checkpoint.json").read_text())
    assert info["agent_rl"]["run"]["concurrency"] == 1  # the flag reaches the run (its episodes one at a time)
    (metrics,) = [json.loads(x) for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    assert metrics["episodes"] == 2 and set(metrics["outcomes"]) <= {"failure", "agent_error", "timeout"}
    assert metrics["degenerate_groups"] == 1.0 and "warning" in metrics  # an untrained model never succeeds
    assert "train agent-rl" in result.output and (tmp_path / "r" / "checkpoint-1").is_dir()


def test_a_step_in_a_world_model_rewards_each_episode_by_the_check_run_there(
    tmp_path, tiny_agent, tiny_checkpoint, scripted_actor, monkeypatch
):
    from types import SimpleNamespace

    actor = scripted_actor(["```bash\necho 1 > answer.txt\n```", "Done."])
    monkeypatch.setattr(rl, "Actor", SimpleNamespace(load=lambda folder, **settings: actor))
    config = agent_rl_of(
        suites=(_suite(tmp_path, 2),), output=str(tmp_path / "run"), init=str(tiny_agent),
        gspo=gspo(group_size=2, max_new_tokens=16), tasks_per_step=1, max_turns=2, max_steps=1, save_every=1,
        split=SplitConfig(held_out=0.0, validation=0.0),
        # the tiny world model is a CPT model; its observation of 32 tokens leaves the 1,024-token agent room to say
        # it is done
        simulation=simulation_of(str(tiny_checkpoint), prompt="plain", max_tokens=32),
    )  # fmt: skip
    last = rl.run_agent_rl(config)
    assert last["episodes"] == 2 and set(last["outcomes"]) <= {"success", "failure"}
    segments = (tmp_path / "run" / "episodes" / "step-00001").glob("segment-*.jsonl")
    episodes = [json.loads(line) for segment in segments for line in segment.read_text().splitlines()]
    assert {e["source"]["kind"] for e in episodes} == {"simulated"} and all(len(e["turns"]) == 1 for e in episodes)
    assert all("world model" in json.loads(e["outcome"]["verifier"])["decided_by"] for e in episodes)
    assert all(e["initial_state"] == "The working directory /work is empty." for e in episodes)


@pytest.mark.slow
def test_an_audit_replays_the_steps_simulated_episodes_in_real_docker_and_scores_their_rewards(
    tmp_path, tiny_agent, scripted_actor, monkeypatch, sandbox_image
):
    """A world model that believes every task done (it shows answer.txt holding the value the task's instruction
    asks for): the agent writes 1, so for real t1 succeeds and t0 fails; the audit replays the four episodes in
    Docker and finds half the rewards true."""
    import re
    from types import SimpleNamespace

    from tests.chat_server import chat_server

    actor = scripted_actor(["```bash\necho 1 > answer.txt\n```", "Done."])
    monkeypatch.setattr(rl, "Actor", SimpleNamespace(load=lambda folder, **settings: actor))

    def believing(request: dict) -> tuple[int, bytes]:
        asked = " ".join(m["content"] for m in request["body"]["messages"])
        value = re.search(r"Write (\d+) to answer.txt", asked).group(1)
        return 200, json.dumps({"choices": [{"message": {"role": "assistant", "content": value}}]}).encode()

    warnings = []
    with chat_server(believing) as (url, _):
        config = agent_rl_of(
            suites=(_suite(tmp_path, 2),), output=str(tmp_path / "run"), init=str(tiny_agent),
            gspo=gspo(group_size=2, max_new_tokens=16), tasks_per_step=2, max_turns=2, max_steps=2, save_every=2,
            audit_every=2, split=SplitConfig(held_out=0.0, validation=0.0), image=sandbox_image,
            simulation=simulation_of(f"{url}=wm", prompt="plain"),
        )  # fmt: skip
        rl.run_agent_rl(config, log=lambda text: None, warn=warnings.append)
    first, second = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert "audit" not in first and first["success"] == 1.0  # step 1 is not audited; the simulator paid everything
    audit = second["audit"]
    assert audit["episodes"] == 4 and audit["agreement"] == 0.5 and audit["sim_successes_real"] == 0.5
    assert audit["real_success"] == 0.5
    replays = [json.loads(x) for f in (tmp_path / "run" / "audit" / "step-00002").glob("segment-*.jsonl")
               for x in f.read_text().splitlines()]  # fmt: skip
    assert {r["source"]["kind"] for r in replays} == {"collected"} and len(replays) == 4
    assert any("reward was the real outcome in 50%" in w for w in warnings)
    with pytest.raises(ValueError, match="--audit-every measures a world model: give --world-model"):
        rl.AgentRL(agent_rl_of(init=str(tiny_agent), audit_every=1))
    with pytest.raises(ValueError, match="train agent-rl has no use for --simulate-file-check"):
        agent_rl_config(init=str(tiny_agent), world_model="wm", simulate_file_check="content")  # the rule is gone


def test_a_world_model_that_never_answers_stops_the_run_at_its_first_step(
    tmp_path, tiny_agent, scripted_actor, monkeypatch
):
    from types import SimpleNamespace

    from tests.chat_server import chat_server

    actor = scripted_actor(["```bash\necho 1 > answer.txt\n```"])
    monkeypatch.setattr(rl, "Actor", SimpleNamespace(load=lambda folder, **settings: actor))
    reasoning_only = json.dumps({"choices": [{"message": {"role": "assistant", "content": "<think>hmm"}}]}).encode()
    with chat_server(lambda request: (200, reasoning_only)) as (url, _):
        config = agent_rl_of(
            suites=(_suite(tmp_path, 1),), output=str(tmp_path / "run"), init=str(tiny_agent),
            gspo=gspo(group_size=2, max_new_tokens=16), tasks_per_step=1, max_turns=2, max_steps=3,
            split=SplitConfig(held_out=0.0, validation=0.0),
            simulation=simulation_of(f"{url}=wm"),
        )  # fmt: skip
        with pytest.raises(ValueError, match=r"step 1: every episode \(2\) ended as infra_error.*no parseable"):
            rl.run_agent_rl(config)
    assert not (tmp_path / "run" / "metrics.jsonl").exists() and not list((tmp_path / "run").glob("checkpoint-*"))


class _Episode:
    """What training_groups reads of a rollout: whether it is trained on, its reward, its token stream."""

    trainable = True
    guided = False

    def __init__(self, reward: float):
        self.reward = reward
        self.transcript = self

    def stream(self):
        return torch.tensor([5, 6, 7]), torch.tensor([0.0, 1.0, 1.0])


@pytest.mark.parametrize("reference", [None, "the starting model"])
def test_a_group_of_equal_rewards_is_not_read_again_unless_a_reference_makes_it_learnable(monkeypatch, reference):
    read = []
    monkeypatch.setattr(rl, "sequence_logprobs", lambda model, ids, mask: read.append(model) or torch.zeros(len(ids)))
    model = torch.nn.Linear(1, 1)
    groups = [[_Episode(1.0), _Episode(0.0)], [_Episode(1.0), _Episode(1.0)], [_Episode(0.0), _Episode(0.0)]]
    trained = rl.training_groups(model, groups, pad_id=0, reference=reference)
    assert trained.rewards == [[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]
    if reference is None:
        assert read == [model] and [g[2] is None for g in trained.groups] == [False, True, True]
    else:
        assert read == [model, reference] * 3 and all(g[2] is not None for g in trained.groups)
