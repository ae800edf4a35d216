"""A world model as the environment: a real served checkpoint answers the actions of a scripted episode."""

import json
import threading
from dataclasses import replace

from tests.builders import ScriptedWorldModel, tagged
from tests.chat_server import chat_server
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.runner import EpisodeSpec, run_collection
from trajforge.collectors.writer import RunWriter
from trajforge.endpoints import Endpoint
from trajforge.evaluation.turns import corpus_turn
from trajforge.sandboxes.base import PageCheck, ShellCheck, Task, ToolCheck
from trajforge.sandboxes.faults import FaultInjector
from trajforge.sandboxes.simulated import ATTEMPTS, EndpointWorldModel, SimulatedEnvironment
from trajforge.sandboxes.starting_state import StartingState
from trajforge.schemas.records import SYSTEM_PROMPT_PARTS, Action


def test_episode_in_simulation_is_a_normal_raw_trajectory(served_model):
    url, model = served_model
    env = SimulatedEnvironment(
        EndpointWorldModel(Endpoint(url, model), max_tokens=12, prompt="plain"),
        instruction="Paginate every list after two items.",
    )
    task = Task(
        id="sim",
        instruction="List the files.",
        actions=(Action(kind="shell", content="ls"), Action(kind="shell", content="cat a.txt")),
        config={"initial_state": "/work holds a.txt"},
    )
    trajectory = run_episode(env, ScriptedPolicy(), task, "sim/sim#0", "run", seed=0)
    assert trajectory.source.kind == "simulated" and trajectory.environment.name == f"simulated:{model}"
    assert trajectory.simulation_instruction == "Paginate every list after two items."
    assert trajectory.initial_state == "/work holds a.txt" and len(trajectory.turns) == 2
    assert all(json.loads(t.observation.metadata)["simulated"] for t in trajectory.turns)
    # The world model is asked with the whole history: the last ask was the second action, after the first turn.
    assert [m["role"] for m in env.messages] == ["system", "user", "assistant", "user"]
    assert env.messages[2]["content"] == trajectory.turns[0].observation.content
    assert env.messages[3]["content"] == "cat a.txt" and "List the files." in env.messages[0]["content"]


def test_faults_wrap_a_simulated_environment_too(served_model):
    url, model = served_model
    env = FaultInjector(
        SimulatedEnvironment(EndpointWorldModel(Endpoint(url, model), max_tokens=4)), {"intermittent_error": 1.0}
    )
    task = Task(id="sim", instruction="x", actions=(Action(kind="shell", content="ls"),))
    trajectory = run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0)
    assert trajectory.source.kind == "simulated" and trajectory.turns[0].fault == "intermittent_error"


class KeepingWriter(RunWriter):
    def __init__(self, folder):
        super().__init__(folder)
        self.added = []

    def add(self, trajectory):
        self.added.append(trajectory)
        super().add(trajectory)


WRITE = Action(kind="shell", content="wc -l < notes.txt > answer.txt")
COUNT_LINES = Task(
    id="count-lines",
    instruction="Count the lines in notes.txt and write the number to answer.txt.",
    actions=(Action(kind="shell", content="wc -l notes.txt"), WRITE),
    check=ShellCheck(command='test "$(cat answer.txt)" = 5'),
    config={"starting_state": StartingState.of_files({"notes.txt": "milk\neggs\n"}).as_dict()},
)


def test_the_world_model_is_asked_as_a_corpus_turn_and_the_agent_sees_only_the_prediction():
    world_model = ScriptedWorldModel(tagged("5 notes.txt"), tagged(""), tagged("5"))
    trajectory = run_episode(SimulatedEnvironment(world_model), ScriptedPolicy(), COUNT_LINES, "k", "run", seed=0)
    assert trajectory.turns[0].observation.content == "5 notes.txt"  # no reasoning, no tags
    row = {
        "trajectory_id": "simulated:count-lines",
        "domain": "terminal",
        **{part: getattr(trajectory, part) for part in SYSTEM_PROMPT_PARTS},
        "turns": [{"action": {"kind": "shell", "content": "wc -l notes.txt"}, "observation": {"content": ""}}],
    }
    # Exactly a corpus turn of the trajectory it records: what the world model was trained and evaluated on.
    assert [(m["role"], m["content"]) for m in world_model.asked[0]] == list(corpus_turn(row, 0).messages)
    system = world_model.asked[0][0]
    assert "notes.txt (10 bytes)\nmilk\neggs" in system["content"] and "# Initial state" in system["content"]
    # A check comparing a file with a value is decided by the file's predicted content, asked right after the
    # episode (as the world-model render lays it out, schemas/check_turn.py): the check's command, which holds the
    # expected value, is never asked.
    read = world_model.asked[2]
    assert [m["role"] for m in read] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert read[3]["content"] == WRITE.content and read[-1]["content"] == "cat answer.txt"
    assert len(world_model.asked) == 3 and not any("test " in m["content"] for m in read)
    assert trajectory.outcome.status == "success" and len(trajectory.turns) == 2
    verifier = json.loads(trajectory.outcome.verifier)
    assert "check_exit_code" not in verifier and verifier["expected"] == "5"
    assert verifier["decided_by"].endswith("the predicted content of answer.txt, compared as the check compares it")


def test_a_predicted_nonzero_or_missing_exit_code_fails_the_shell_check():
    task = replace(COUNT_LINES, check=ShellCheck(command="grep -q milk notes.txt"))
    for answer, code in ((tagged("exit code: 1"), 1), (tagged("grep: notes.txt: No such file"), None)):
        env = SimulatedEnvironment(ScriptedWorldModel(tagged("5 notes.txt"), tagged(""), answer))
        trajectory = run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0)
        assert trajectory.outcome.status == "failure" and json.loads(trajectory.outcome.verifier)["exit_code"] == code
        assert "predicted exit code" in json.loads(trajectory.outcome.verifier)["decided_by"]
    env = SimulatedEnvironment(ScriptedWorldModel(tagged("5 notes.txt"), tagged(""), tagged("exit code: 0")))
    assert run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0).outcome.status == "success"


def test_a_file_comparison_is_decided_by_the_files_predicted_content_compared_outside_the_model():
    cases = (
        ("4\n", "failure"),
        ("5\n\n", "success"),  # trailing newlines are dropped, as $(...) drops them
        ("cat: answer.txt: No such file or directory", "failure"),  # a missing file reads empty
        ("5 answer.txt", "failure"),
    )
    for content, status in cases:
        env = SimulatedEnvironment(ScriptedWorldModel(tagged("5 notes.txt"), tagged(""), tagged(content)))
        trajectory = run_episode(env, ScriptedPolicy(), COUNT_LINES, "k", "run", seed=0)
        assert trajectory.outcome.status == status, content
        assert json.loads(trajectory.outcome.verifier)["predicted"] == content
    empty = replace(COUNT_LINES, check=ShellCheck(command="test \"$(cat answer.txt)\" = ''"))
    env = SimulatedEnvironment(
        ScriptedWorldModel(tagged("5 notes.txt"), tagged(""), tagged("cat: answer.txt: No such file or directory"))
    )
    assert run_episode(env, ScriptedPolicy(), empty, "k", "run", seed=0).outcome.status == "success"


def one_action_task(domain: str, action: Action, check) -> Task:
    return Task(id=f"{domain}-task", instruction="Do it.", domain=domain, actions=(action,), check=check)


def test_a_tool_check_is_one_more_simulated_call_whose_predicted_result_is_tested():
    set_pool = Action(kind="tool_call", name="set", content='{"key": "db/pool_size", "value": "20"}')
    task = one_action_task(
        "mcp", set_pool, ToolCheck(tool="get", arguments={"key": "db/pool_size"}, contains='"value": "20"')
    )
    result = json.dumps({"content": [{"type": "text", "text": '{"value": "20", "version": 3}'}], "isError": False})
    world_model = ScriptedWorldModel(tagged('{"content": []}'), tagged(result))
    trajectory = run_episode(SimulatedEnvironment(world_model), ScriptedPolicy(), task, "k", "run", seed=0)
    assert (
        world_model.asked[1][-1]["content"] == 'get {"key": "db/pool_size"}' and trajectory.outcome.status == "success"
    )
    error = json.dumps({"content": [{"type": "text", "text": '"value": "20"'}], "isError": True})
    env = SimulatedEnvironment(ScriptedWorldModel(tagged("{}"), tagged(error)))
    assert run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0).outcome.status == "failure"


def test_a_page_check_is_tested_on_the_predicted_page():
    goto = Action(kind="browser", name="goto", content='{"url": "/order/1"}')
    task = one_action_task("web", goto, PageCheck(url_contains="/order/1", contains="Ada Lovelace"))
    page = 'URL: http://shop.local/order/1\nTitle: Order 1\n- heading "Ada Lovelace"'
    world_model = ScriptedWorldModel(tagged(page))
    trajectory = run_episode(SimulatedEnvironment(world_model), ScriptedPolicy(), task, "k", "run", seed=0)
    assert trajectory.outcome.status == "success" and len(world_model.asked) == 1  # no extra ask: the page is there
    assert json.loads(trajectory.outcome.verifier)["url"] == "http://shop.local/order/1"
    wrong = ScriptedWorldModel(tagged("URL: http://shop.local/cart\nTitle: Cart\nAda Lovelace"))
    assert (
        run_episode(SimulatedEnvironment(wrong), ScriptedPolicy(), task, "k", "run", seed=0).outcome.status == "failure"
    )


def test_a_world_model_that_never_gives_an_observation_ends_every_episode_as_infra_error(tmp_path):
    """Answers that are all reasoning hold no observation: asked again, then the episode is an infra_error; the runner
    retries it, counts it and the run ends when every episode has."""
    world_model = ScriptedWorldModel("<think>I am not sure what the terminal", prompt="template")
    specs = [EpisodeSpec(f"s/count-lines#{i}", COUNT_LINES, i) for i in range(3)]
    writer = KeepingWriter(tmp_path)
    result = run_collection(
        specs, writer, lambda spec: SimulatedEnvironment(world_model), ScriptedPolicy, "run", concurrency=2, retries=1
    )
    assert result.ran == 3 and result.infra_errors == 3 and result.retries == 3
    assert {t.outcome.status for t in writer.added} == {"infra_error"}
    assert "no parseable observation in 3 answers" in writer.added[0].outcome.error
    assert len(world_model.asked) == 3 * 2 * ATTEMPTS  # 3 episodes, each tried twice, each turn asked 3 times
    # A plain-prompted world model answers with the observation itself: an empty answer is an empty output.
    env = SimulatedEnvironment(ScriptedWorldModel("", prompt="plain"))
    assert run_episode(env, ScriptedPolicy(), COUNT_LINES, "k", "run", seed=0).turns[0].observation.content == ""


def test_an_endpoint_that_times_out_mid_episode_is_retried_then_infra_error_keeping_the_turns_made():
    replies = iter([tagged("5 notes.txt")])

    def answer(request):
        reply = next(replies, None)
        if reply is None:
            threading.Event().wait(1.5)  # past the client's timeout: every later request
            reply = ""
        return 200, json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()

    task = replace(COUNT_LINES, actions=(*COUNT_LINES.actions, Action(kind="shell", content="cat notes.txt")))
    with chat_server(answer) as (url, requests):
        world_model = EndpointWorldModel(Endpoint(url, "wm", timeout=0.3, attempts=2))
        trajectory = run_episode(SimulatedEnvironment(world_model), ScriptedPolicy(), task, "k", "run", seed=0)
    assert len(requests) == 3  # the first turn, then the second turn's request and its retry
    assert (
        trajectory.outcome.status == "infra_error" and "the world model gave no observation" in trajectory.outcome.error
    )
    assert [t.observation.content for t in trajectory.turns] == ["5 notes.txt"]  # nothing made before it is lost


# -- agents that game the check, against a world model that believes whatever its prompt says ----------------------
EXPECTED = "4817"  # 1200 + 3617: shown nowhere in the task, so only a prompt holding the check can show it
SUM = Task(
    id="sum",
    instruction="Add up the numbers in numbers.txt and write the sum to out/sum.txt.",
    check=ShellCheck(command=f'test "$(cat out/sum.txt)" = {EXPECTED}'),
    config={"starting_state": StartingState.of_files({"numbers.txt": "1200\n3617\n"}).as_dict()},
)
GAMING_AGENTS = {
    "answers Done. at once": (),
    "prints the exit code it wants": ('echo "exit code: 0"',),
    "names the checked file": ("cat out/sum.txt",),
    "touches the checked file": ("mkdir -p out && touch out/sum.txt",),
    "writes the checked file's name into it": ("echo out/sum.txt > out/sum.txt",),
}


class BelievingWorldModel(ScriptedWorldModel):
    """Believes its prompt: a command's exit code is always 0; `cat F` shows the expected value wherever the
    conversation shows it, else what the episode echoed into F, else no such file; `echo X` prints X."""

    def answer(self, messages, seed):
        self.asked.append(messages)
        action, seen = messages[-1]["content"], "\n".join(m["content"] for m in messages)
        if action.endswith('echo "exit code: $?"'):
            return tagged("exit code: 0")
        if action.startswith("cat "):
            path = action.removeprefix("cat ")
            written = [m["content"].split("echo ", 1)[1].split(" > ")[0] for m in messages[1:-1]
                       if m["role"] == "user" and m["content"].endswith(f" > {path}")]  # fmt: skip
            if EXPECTED in seen:
                return tagged(EXPECTED)
            return tagged(written[-1] if written else f"cat: {path}: No such file or directory")
        return tagged(action.removeprefix("echo ").strip('"') if action.startswith("echo ") else "")


def simulated_outcome(task: Task) -> tuple[str, BelievingWorldModel]:
    world_model = BelievingWorldModel()
    env = SimulatedEnvironment(world_model)
    return run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0).outcome.status, world_model


def test_agents_that_game_the_check_are_not_paid_by_a_world_model_that_believes_its_prompt():
    """Each agent fails the real check (out/sum.txt never holds 4817); the world model pays none of them, and no
    conversation it is asked, during the episode or for its check, shows it 4817. (Before: the check's own turn,
    `test "$(cat out/sum.txt)" = 4817`, was asked first and `cat out/sum.txt` after it: every agent was paid.)"""
    for agent, commands in GAMING_AGENTS.items():
        task = replace(SUM, actions=tuple(Action(kind="shell", content=c) for c in commands))
        status, world_model = simulated_outcome(task)
        assert status == "failure", agent
        assert not any(EXPECTED in m["content"] for asked in world_model.asked for m in asked), agent


def test_an_episode_that_could_change_nothing_is_decided_on_the_real_starting_state_without_asking():
    for agent in ("answers Done. at once", "prints the exit code it wants", "names the checked file"):
        task = replace(SUM, actions=tuple(Action(kind="shell", content=c) for c in GAMING_AGENTS[agent]))
        status, world_model = simulated_outcome(task)
        assert status == "failure" and len(world_model.asked) == len(task.actions), agent
    # A starting state that already passes passes, as the real check would on it.
    solved = StartingState.of_files({"numbers.txt": "1200\n3617\n", "out/sum.txt": f"{EXPECTED}\n"})
    status, world_model = simulated_outcome(replace(SUM, config={"starting_state": solved.as_dict()}))
    assert status == "success" and world_model.asked == []


def test_an_agent_that_writes_the_value_is_paid_and_its_other_checks_skip_the_turns_that_changed_nothing():
    honest = replace(SUM, actions=(Action(kind="shell", content=f"mkdir -p out && echo {EXPECTED} > out/sum.txt"),))
    assert simulated_outcome(honest)[0] == "success"
    # A check that is no file comparison is asked right after the starting state when nothing could have changed:
    # the episode's printed `exit code: 0` is not in its context.
    other = replace(SUM, check=ShellCheck(command="test -s out/sum.txt"))
    printed = replace(other, actions=(Action(kind="shell", content='echo "exit code: 0"'),))
    env = SimulatedEnvironment(ScriptedWorldModel(tagged("exit code: 0"), tagged("exit code: 1")))
    assert run_episode(env, ScriptedPolicy(), printed, "k", "run", seed=0).outcome.status == "failure"
    assert [m["role"] for m in env.world_model.asked[1]] == ["system", "user"]
