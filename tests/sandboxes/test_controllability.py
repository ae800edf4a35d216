"""Controllability from episodes that record their control spec: instructed faults produced, uninstructed turns
left clean, per kind; latency never scored."""

from tests.builders import make_trajectory
from trajforge.sandboxes.control import ControlSpec, Injection
from trajforge.sandboxes.controllability import controllability, describe_produced
from trajforge.schemas.control_record import CONTROL_KEY

ERROR = "ls: temporary failure: Resource temporarily unavailable"
PAGE = '{"items": [1, 2], "next_page_token": "t1"}'


SHELL = {"kind": "shell", "content": "ls"}
LIST = {"kind": "tool_call", "name": "list", "content": "{}"}


def episode(observations: list[str], injections: tuple[Injection, ...], actions: list[dict] = (), origin: str = ""):
    import json

    actions = list(actions) or [SHELL] * len(observations)
    turns = [
        {"index": i, "action": action, "observation": {"content": text}}
        for i, (action, text) in enumerate(zip(actions, observations, strict=True))
    ]
    spec = ControlSpec(injections=injections)
    source = {"kind": "simulated", "by": "wm", "run_id": "run-1", **({"origin": origin} if origin else {})}
    return make_trajectory(turns=turns, metadata=json.dumps({CONTROL_KEY: spec.record()}), source=source)


def test_instructed_faults_produced_and_uninstructed_turns_clean():
    obeyed = episode([ERROR, "a b", PAGE], (Injection(kind="intermittent_error", turn=0),
                                            Injection(kind="pagination", turn=2)), [SHELL, SHELL, LIST])  # fmt: skip
    ignored = episode(["a b", ERROR, "c"], (Injection(kind="intermittent_error", turn=0),
                                            Injection(kind="latency", turn=2, params={"seconds": 1})))  # fmt: skip
    figures = controllability([obeyed, ignored, make_trajectory()])  # the last records no control: not counted
    assert figures["episodes"] == 2 and figures["instructed_faults"] == 3
    assert figures["produced_share"] == 2 / 3
    assert figures["per_kind"] == {"intermittent_error": {"instructed": 2, "produced": 1},
                                   "pagination": {"instructed": 1, "produced": 1}}  # fmt: skip
    # uninstructed: obeyed's turn 1, ignored's turns 1 (a fault nobody asked for) and 2 (latency only)
    assert figures["uninstructed_turns"] == 3 and figures["clean_share"] == 2 / 3
    assert figures["not_scored"] == ["latency"]


def test_nothing_to_measure_says_none():
    figures = controllability([make_trajectory()])
    assert figures["episodes"] == 0 and figures["produced_share"] is None and figures["clean_share"] is None


def test_a_fault_that_cannot_hit_the_action_is_not_counted_as_instructed():
    # pagination told for a shell command (a spec sampled without the environment's action kinds)
    told = (Injection(kind="pagination", turn=0), Injection(kind="pagination", turn=1))
    figures = controllability([episode(["a b", PAGE], told, [SHELL, LIST])])
    assert figures["instructed_faults"] == 1 and figures["produced_share"] == 1.0
    assert figures["uninstructed_turns"] == 1 and figures["clean_share"] == 1.0


def test_a_cut_the_answer_left_no_room_for_is_a_miss_not_a_smaller_denominator():
    cut = {"max_chars": 10}
    told = tuple(Injection(kind="truncation", turn=i, params=cut) for i in range(3))
    long, cut_short = "x" * 11, "x" * 10 + "\n[output truncated]"
    figures = controllability([episode(["short", long, cut_short], told)])
    # every instructed cut counts: the short answer dodged it (a miss), the long one ignored it, one obeyed
    assert figures["per_kind"] == {"truncation": {"instructed": 3, "produced": 1}}
    assert figures["produced_share"] == 1 / 3 and figures["missed_too_short"] == {"truncation": 1}
    assert figures["uninstructed_turns"] == 0 and figures["clean_share"] is None


def test_a_model_that_dodges_the_fault_does_not_shrink_its_denominator():
    told = (Injection(kind="truncation", turn=0, params={"max_chars": 10}),)
    obeyed = episode(["x" * 10 + "\n[output truncated]"], told, origin="toy/a#0")
    dodged = episode(["ok"], told, origin="toy/b#0")  # answered too briefly to be cut: not let off
    figures = controllability([obeyed, dodged])
    assert figures["instructed_faults"] == 2 and figures["produced_share"] == 0.5


def test_repeats_of_one_task_are_one_cluster_in_the_interval():
    told = (Injection(kind="intermittent_error", turn=0),)
    outcomes = [ERROR, ERROR, ERROR, "a b", "a b", "a b"]  # produced in three episodes, missed in three
    repeats = [episode([text], told, origin=f"toy/{'ab'[i // 3]}#{i % 3}") for i, text in enumerate(outcomes)]
    distinct = [episode([text], told, origin=f"toy/t{i}#0") for i, text in enumerate(outcomes)]
    clustered, independent = controllability(repeats), controllability(distinct)
    assert clustered["produced_share"] == independent["produced_share"] == 0.5
    assert clustered["tasks"] == 2 and independent["tasks"] == 6
    (low, high), (low_i, high_i) = clustered["produced_interval"], independent["produced_interval"]
    assert high - low > high_i - low_i and low <= 0.5 <= high  # two tasks know less than six


def test_every_fault_produced_still_has_an_interval_over_its_tasks():
    told = (Injection(kind="intermittent_error", turn=0),)
    figures = controllability([episode([ERROR], told, origin=f"toy/t{i}#0") for i in range(4)])
    low, high = figures["produced_interval"]
    assert figures["produced_share"] == 1.0 and high == 1.0 and 0.4 < low < 0.6  # Wilson over 4 tasks
    assert describe_produced(figures) == f"100.0 [{low * 100:.1f}, 100.0] n=4"


def controlled_episode(*answers: str):
    """count-lines (two actions) simulated under a plan of intermittent errors at actions 2, 3 and 4, the world
    model answering in turn with `answers`."""
    from tests.builders import ScriptedWorldModel
    from tests.sandboxes.test_simulated import COUNT_LINES
    from trajforge.collectors.episode import run_episode
    from trajforge.collectors.policies.scripted import ScriptedPolicy
    from trajforge.sandboxes.control import ControlDistribution, ControlledSimulation
    from trajforge.sandboxes.simulated import SimulatedEnvironment

    plan = ControlDistribution(horizon=4, faults={"intermittent_error": {"rate": 1.0, "turns": (2, 4)}})
    env = ControlledSimulation(SimulatedEnvironment(ScriptedWorldModel(*answers)), plan)
    return run_episode(env, ScriptedPolicy(), COUNT_LINES, "s/count-lines#0", "run", seed=0)


def test_a_fault_told_for_an_action_never_answered_is_a_miss_and_one_planned_past_the_episode_is_reported_apart():
    """Issue 54, item 7: the denominator is what the world model was told. It is told the faults of each action as
    that action is asked (sandboxes/control.py), so a fault planned for action 3 or 4 of a two-action episode was
    told to no one: reported as not reached, never a miss. A world model told that action 2 fails, which gives no
    observation for it (the episode ends there as infra_error), is not let off: that fault counts, not produced.
    (Before: it dropped out of the denominator with the turn that never came.)"""
    from tests.builders import tagged

    answered = controlled_episode(tagged("2 notes.txt"), tagged(f"echo: {ERROR.split(': ', 1)[1]}"), tagged("5"))
    assert len(answered.turns) == 2 and answered.outcome.status in ("success", "failure")
    figures = controllability([answered])
    assert figures["instructed_faults"] == 1 and figures["produced_share"] == 1.0  # action 2's error, produced
    assert figures["not_reached"] == {"intermittent_error": 2} and figures["unanswered"] == {}

    silent = controlled_episode(tagged("2 notes.txt"), "")  # an untagged, empty answer holds no observation
    assert silent.outcome.status == "infra_error" and len(silent.turns) == 1
    assert "action 2 fails with a temporary error" in silent.simulation_instruction  # it was told
    figures = controllability([silent])
    assert figures["instructed_faults"] == 1 and figures["produced_share"] == 0.0
    assert figures["unanswered"] == {"intermittent_error": 1} and figures["missed_too_short"] == {}
    assert figures["not_reached"] == {"intermittent_error": 2}  # actions 3 and 4: never asked, never told
    assert figures["uninstructed_turns"] == 1 and figures["clean_share"] == 1.0  # action 1 only: 2 never answered
    both = controllability([answered, silent])
    assert (
        both["instructed_faults"] == 2
        and both["produced_share"] == 0.5
        and both["per_kind"] == {"intermittent_error": {"instructed": 2, "produced": 1}}
    )
