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


COUNT_LINES = Task(
    id="count-lines",
    instruction="Count the lines in notes.txt and write the number to answer.txt.",
    actions=(Action(kind="shell", content="wc -l notes.txt"),),
    check=ShellCheck(command='test "$(cat answer.txt)" = 5'),
    config={"starting_state": StartingState.of_files({"notes.txt": "milk\neggs\n"}).as_dict()},
)


def test_the_world_model_is_asked_as_a_corpus_turn_and_the_agent_sees_only_the_prediction():
    world_model = ScriptedWorldModel(tagged("5 notes.txt"), tagged("exit code: 0"), tagged("5"))
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
    # The check was one more simulated command, asked after the whole episode, that printed its exit code.
    check = world_model.asked[1]
    assert [m["role"] for m in check] == ["system", "user", "assistant", "user"]
    assert check[-1]["content"] == '( test "$(cat answer.txt)" = 5 ); echo "exit code: $?"'
    # A check comparing a file with a value is decided by the file's predicted content, asked after the check turn
    # as a real outcome records the two (schemas/check_turn.py).
    read = world_model.asked[2]
    assert [m["role"] for m in read] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert read[3]["content"] == check[-1]["content"] and read[4]["content"] == "exit code: 0"
    assert read[-1]["content"] == "cat answer.txt" and len(world_model.asked) == 3
    assert trajectory.outcome.status == "success" and len(trajectory.turns) == 1
    verifier = json.loads(trajectory.outcome.verifier)
    assert verifier["check_exit_code"] == 0 and verifier["expected"] == "5"
    assert verifier["decided_by"].endswith("the predicted content of answer.txt, compared as the check compares it")


def test_a_predicted_nonzero_or_missing_exit_code_fails_the_shell_check():
    task = replace(COUNT_LINES, check=ShellCheck(command="grep -q milk notes.txt"))
    for answer, code in ((tagged("exit code: 1"), 1), (tagged("grep: notes.txt: No such file"), None)):
        env = SimulatedEnvironment(ScriptedWorldModel(tagged("5 notes.txt"), answer))
        trajectory = run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0)
        assert trajectory.outcome.status == "failure" and json.loads(trajectory.outcome.verifier)["exit_code"] == code
        assert "predicted exit code" in json.loads(trajectory.outcome.verifier)["decided_by"]
    env = SimulatedEnvironment(ScriptedWorldModel(tagged("5 notes.txt"), tagged("exit code: 0")))
    assert run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0).outcome.status == "success"


def test_a_file_comparison_is_decided_by_the_files_predicted_content_not_the_predicted_exit_code():
    cases = (
        ("exit code: 0", "4\n", "failure"),  # the world model's own file contradicts its exit code: the file decides
        ("exit code: 1", "5\n\n", "success"),  # trailing newlines are dropped, as $(...) drops them
        ("exit code: 0", "cat: answer.txt: No such file or directory", "failure"),  # a missing file reads empty
        ("exit code: 0", "5 answer.txt", "failure"),
    )
    for check_answer, content, status in cases:
        env = SimulatedEnvironment(ScriptedWorldModel(tagged("5 notes.txt"), tagged(check_answer), tagged(content)))
        trajectory = run_episode(env, ScriptedPolicy(), COUNT_LINES, "k", "run", seed=0)
        assert trajectory.outcome.status == status, (check_answer, content)
        assert json.loads(trajectory.outcome.verifier)["predicted"] == content
    empty = replace(COUNT_LINES, check=ShellCheck(command="test \"$(cat answer.txt)\" = ''"))
    env = SimulatedEnvironment(
        ScriptedWorldModel(
            tagged("5 notes.txt"), tagged("exit code: 1"), tagged("cat: answer.txt: No such file or directory")
        )
    )
    assert run_episode(env, ScriptedPolicy(), empty, "k", "run", seed=0).outcome.status == "success"


def test_under_the_exit_code_rule_a_file_comparison_is_decided_by_its_predicted_exit_code_and_no_file_is_read():
    for check_answer, status in (("exit code: 0", "success"), ("exit code: 1", "failure")):
        world_model = ScriptedWorldModel(tagged("5 notes.txt"), tagged(check_answer), tagged("5"))
        env = SimulatedEnvironment(world_model, file_check="exit-code")
        trajectory = run_episode(env, ScriptedPolicy(), COUNT_LINES, "k", "run", seed=0)
        verifier = json.loads(trajectory.outcome.verifier)
        assert trajectory.outcome.status == status and "predicted exit code" in verifier["decided_by"]
        assert len(world_model.asked) == 2  # the episode's one command, then the check: no cat of the file


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
