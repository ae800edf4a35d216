"""Controllability from episodes that record their control spec: instructed faults produced, uninstructed turns
left clean, per kind; latency never scored."""

from tests.builders import make_trajectory
from trajforge.sandboxes.control import ControlSpec, Injection
from trajforge.sandboxes.controllability import controllability
from trajforge.schemas.control_record import CONTROL_KEY

ERROR = "ls: temporary failure: Resource temporarily unavailable"
PAGE = '{"items": [1, 2], "next_page_token": "t1"}'


SHELL = {"kind": "shell", "content": "ls"}
LIST = {"kind": "tool_call", "name": "list", "content": "{}"}


def episode(observations: list[str], injections: tuple[Injection, ...], actions: list[dict] = ()):
    import json

    actions = list(actions) or [SHELL] * len(observations)
    turns = [
        {"index": i, "action": action, "observation": {"content": text}}
        for i, (action, text) in enumerate(zip(actions, observations, strict=True))
    ]
    spec = ControlSpec(injections=injections)
    return make_trajectory(turns=turns, metadata=json.dumps({CONTROL_KEY: spec.record()}))


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


def test_a_cut_of_an_output_shorter_than_the_cut_is_not_applicable():
    cut = {"max_chars": 10}
    told = tuple(Injection(kind="truncation", turn=i, params=cut) for i in range(3))
    long, cut_short = "x" * 11, "x" * 10 + "\n[output truncated]"
    figures = controllability([episode(["short", long, cut_short], told)])
    assert figures["per_kind"] == {"truncation": {"instructed": 2, "produced": 1}}
    assert figures["not_applicable"] == {"truncation": 1}
    assert figures["uninstructed_turns"] == 1 and figures["clean_share"] == 1.0  # the short one: nothing to cut
