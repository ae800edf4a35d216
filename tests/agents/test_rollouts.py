"""Groups of episodes: G at once, their answers in shared batches, each episode's ids kept as generated."""

import pytest

from tests.collectors.fakes import FakeEnvironment
from trajforge.agents.checkpoint_policy import Actor
from trajforge.agents.rollouts import plan_groups, run_rollouts
from trajforge.collectors.tasks import Suite, load_suite
from trajforge.sandboxes.base import ShellCheck, Task
from trajforge.schemas.sources import read_records

TASK = Task(id="touch", instruction="Create done.txt.", check=ShellCheck(command="done.txt"))
SUITE = Suite(name="fake", domain="terminal", path=None, tasks=(TASK,))


def _recording(actor: Actor) -> Actor:
    """Keep what every batch returned, as `actor.returned`."""
    generate, actor.returned = actor.broker.generate_batch, []

    def recorded(asks):
        answers = generate(asks)
        actor.returned.append(answers)
        return answers

    actor.broker.generate_batch = recorded
    return actor


def test_a_group_is_sampled_as_one_batch_and_each_episode_keeps_the_ids_generate_returned(tmp_path, tiny_agent):
    actor = _recording(Actor.load(str(tiny_agent), temperature=1.0, gather_s=5.0))
    (specs,) = plan_groups([(SUITE, TASK)], group_size=3, seed=0, tag="t")
    assert len({s.seed for s in specs}) == 3 and all(s.key.startswith("fake/touch#t.") for s in specs)
    rollouts, result = run_rollouts(
        specs, actor, lambda spec: FakeEnvironment(), tmp_path / "r", str(tiny_agent), 3, 4, 16
    )
    assert actor.broker.batch_sizes[0] == 3 and result.ran == 3  # the three first answers: one generate call
    returned = sorted(map(tuple, (a for batch in actor.returned for a in batch)))
    kept = sorted(tuple(turn.action_ids) for r in rollouts for turn in r.transcript.turns if turn.action_ids)
    assert kept == returned and any(returned)
    for rollout in rollouts:
        ids, mask = rollout.transcript.stream()
        assert ids[mask == 1].tolist() == [i for t in rollout.transcript.turns for i in t.action_ids]
    assert [r.trajectory.source.origin for r in rollouts] == [s.key for s in specs]
    assert len(list(read_records([tmp_path / "r"]))) == 3  # the episodes are raw trajectories too


def test_an_answer_depends_on_its_seed_not_on_its_batch(tiny_agent):
    from trajforge.agents.batching import Ask

    actor = Actor.load(str(tiny_agent), temperature=1.0)
    prompt = list(range(10, 40))
    batch = actor.generate_batch([Ask(prompt, seed, 24) for seed in (1, 2, 1, 3)])
    assert batch[0] == batch[2] == actor.generate_batch([Ask(prompt, 1, 24)])[0]
    assert len({tuple(a) for a in batch}) > 1


def test_an_environment_that_never_starts_gives_an_episode_that_is_not_trained_on(tmp_path, scripted_actor):
    actor = scripted_actor(["```bash\ntouch done.txt\n```", "Done."])
    (specs,) = plan_groups([(SUITE, TASK)], group_size=2, seed=0, tag="t")
    broken = {specs[1].key}
    rollouts, _ = run_rollouts(
        specs, actor, lambda s: FakeEnvironment(fail_resets=9 if s.key in broken else 0), tmp_path, "tiny", 2, 4, 16
    )
    assert [r.trajectory.outcome.status for r in rollouts] == ["success", "infra_error"]
    assert [r.reward for r in rollouts] == [1.0, 0.0] and [r.trainable for r in rollouts] == [True, False]


@pytest.mark.slow
def test_in_docker_the_observation_is_what_the_terminal_answered_and_the_answers_ids_are_kept(
    tmp_path, scripted_actor, docker_client, sandbox_image
):
    from trajforge.collectors.environments import Settings, build_environment

    suite = load_suite("terminal")
    task = next(t for t in suite.tasks if t.id == "count-lines")
    script = ["```bash\nwc -l < notes.txt > answer.txt\n```", "```bash\ncat answer.txt\n```", "5."]
    actor = scripted_actor(script, gather_s=10)
    settings = Settings(run_id="pytest-agents", image=sandbox_image, command_timeout=5, docker_client=docker_client)
    (specs,) = plan_groups([(suite, task)], group_size=2, seed=1, tag="t")
    rollouts, _ = run_rollouts(
        specs, actor, lambda s: build_environment(s.environment, settings), tmp_path, "tiny", 2, 5, 32
    )
    assert [r.trajectory.outcome.status for r in rollouts] == ["success", "success"]
    assert actor.broker.batch_sizes == [2, 2, 2]  # the two episodes moved in step
    transcript = rollouts[0].transcript
    assert [t.action_ids for t in transcript.turns] == [b[0] for b in actor.returned]
    observation = actor.tokenizer.decode(transcript.turns[2].prompt_ids, skip_special_tokens=True)
    assert observation.strip() == "5" == rollouts[0].trajectory.turns[1].observation.content.strip()


def test_greedy_episodes_do_not_depend_on_how_they_were_batched(tmp_path, tiny_agent):
    """Issue 54: greedy evaluation must not change with the batching. Tasks whose prompts differ in length, run one
    at a time and all at once (left-padded rows, read on from the prefix cache), give every episode the same
    tokens in fp32. The tiny model's weights are scaled up (x8) so that its answers depend on the whole context (at
    its initial scale it mostly repeats its last token, and a batch that attended to its padding would pass)."""
    import shutil

    import torch
    from transformers import AutoModelForCausalLM

    folder = tmp_path / "sensitive"
    shutil.copytree(tiny_agent, folder)
    model = AutoModelForCausalLM.from_pretrained(str(folder))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(8.0 if parameter.dim() == 2 else 1.0)
    model.save_pretrained(str(folder))
    words = ["ls -la", "cat notes.txt | wc -l", "total 4", "count the lines", "answer.txt", "notes.txt"]
    instructions = [" ".join(words[(i + j) % 6] for j in range(1 + 4 * i)) for i in range(4)]
    tasks = [Task(id=f"t{i}", instruction=text, check=TASK.check) for i, text in enumerate(instructions)]
    suite = Suite(name="fake", domain="terminal", path=None, tasks=tuple(tasks))

    def streams(concurrency: int) -> tuple[dict, list[int]]:
        actor = Actor.load(str(folder), trained=True, temperature=0.0, gather_s=1.0)
        specs = [s for group in plan_groups([(suite, t) for t in tasks], 2, 0, "g") for s in group]
        rollouts, _ = run_rollouts(
            specs, actor, lambda spec: FakeEnvironment(), tmp_path / f"c{concurrency}", "tiny", concurrency, 3, 24
        )
        return {r.spec.key: [t.action_ids for t in r.transcript.turns] for r in rollouts}, actor.broker.batch_sizes

    alone, alone_sizes = streams(1)
    together, together_sizes = streams(8)
    assert set(alone_sizes) == {1} and max(together_sizes) == 8  # one at a time; all eight in one batch
    first_answers = {tuple(answers[0]) for answers in alone.values()}
    assert len(first_answers) > 1, alone  # they depend on the task: the model reads its context
    assert together == alone
