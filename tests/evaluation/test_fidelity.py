"""The fidelity figures as pure functions: exact match and error-flag agreement of single turns (beside the judge),
the success confusion matrix, and WM2Real's per-turn agreement."""

import json

import pytest

from trajforge.evaluation.embedded import EmbeddedJudge
from trajforge.evaluation.fidelity import (
    action_label,
    answer_source,
    one_sided,
    predicted_error,
    real_error,
    replay_figures,
    same_observation,
    step_figures,
    success_confusion,
    turn_agreement,
)
from trajforge.evaluation.turns import PredictionTurn


def turn(reference: str, action: str = "ls", **observation) -> PredictionTurn:
    return PredictionTurn(id=reference, domain="terminal", system=None, history=(), action=action, reference=reference,
                observation={"content": reference, **observation})  # fmt: skip


def test_error_flags_real_and_predicted():
    assert real_error({"exit_code": 2}) and real_error({"is_error": True}) and not real_error({"exit_code": 0})
    assert predicted_error("cat: x: No such file or directory") and predicted_error("bash: foo: command not found")
    assert not predicted_error("a.txt\nb.txt")
    assert predicted_error(json.dumps({"content": [], "isError": True}))
    assert not predicted_error(json.dumps({"content": [{"type": "text", "text": "error: none"}], "isError": False}))


def test_step_figures_count_an_unanswered_turn_as_a_miss():
    turns = [turn("a.txt\n"), turn("ls: cannot access 'x': No such file or directory", exit_code=2), turn("b")]
    answers = ["<predicted_observation>a.txt</predicted_observation>", "total 0", None]
    figures = step_figures("wm", turns, answers, EmbeddedJudge())
    assert figures["turns"] == 3 and figures["answered"] == 2
    assert figures["exact_match"] == pytest.approx(1 / 3) and figures["error_flag_agreement"] == pytest.approx(1 / 3)
    assert figures["judge_scored"] == 3 and figures["judge_overall"] is not None  # the miss scored too, at 0
    assert same_observation("x  \ny\n", "x\ny") and not same_observation("x", "y")


def test_step_figures_say_per_turn_what_was_asked_answered_and_matched():
    turns = [turn("a.txt\n", "ls"), turn("2 b.txt\n", "wc -l b.txt"), turn("b")]
    details = [{"model": "earlier"}]  # entries already there are left alone
    answers = ["<predicted_observation>a.txt</predicted_observation>", "3 b.txt", None]
    figures = step_figures("wm", turns, answers, EmbeddedJudge(), details)
    assert details[0] == {"model": "earlier"} and len(details) == 4
    assert [d["exact"] for d in details[1:]] == [True, False, False]
    assert sum(d["exact"] for d in details[1:]) == figures["exact_match"] * len(turns)
    second = details[2]
    asked = (second["model"], second["action"], second["reference"], second["prediction"])
    assert asked == ("wm", "wc -l b.txt", "2 b.txt\n", "3 b.txt")
    assert second["scores"] is not None and details[3]["rule"] == "no answer: scored as a miss"


def test_an_empty_answer_is_the_prediction_of_a_silent_command_not_a_missing_one():
    turns = [turn("", "sort a.txt > b.txt", exit_code=0), turn("3 a.txt\n", "wc -l a.txt", exit_code=0),
             turn("", "rm b.txt", exit_code=0)]  # fmt: skip
    figures = step_figures("wm", turns, ["", "", None], EmbeddedJudge())
    assert figures["answered"] == 2
    assert figures["exact_match"] == pytest.approx(1 / 3)  # right where nothing is printed, wrong where a count is
    assert figures["error_flag_agreement"] == pytest.approx(2 / 3)
    assert (
        figures["exact_by_action"]["sort"]["exact_match"] == 1.0
        and figures["exact_by_action"]["rm"]["exact_match"] == 0.0
    )
    # the judge's figures are over every turn, as eval's: an empty prediction right where nothing is printed (100),
    # wrong where a count is (0), the unanswered turn a miss (0)
    assert figures["judge_scored"] == 3 and figures["judge_overall"] == pytest.approx(100 / 3)


def test_exact_match_per_action_says_which_actions_the_model_gets_wrong():
    turns = [turn("3 a.txt", "wc -l a.txt"), turn("2 b.txt", "wc -l b.txt"), turn("x\ny", "sort c.txt"),
             turn('{"key": "k"}', 'set {"key": "k", "value": "v"}'), turn("", "")]  # fmt: skip
    answers = ["3 a.txt", "9 b.txt", "x\ny", '{"key": "j"}', None]
    by_action = step_figures("wm", turns, answers, EmbeddedJudge())["exact_by_action"]
    assert list(by_action) == ["wc", "(empty)", "set", "sort"]  # most turns first, then by name
    assert by_action["wc"] == {"turns": 2, "exact_match": 0.5}
    assert by_action["sort"]["exact_match"] == 1.0 and by_action["set"]["exact_match"] == 0.0
    assert by_action["(empty)"] == {"turns": 1, "exact_match": 0.0}
    assert action_label("  grep -c x f") == "grep"


def test_exact_match_per_source_says_whether_the_model_fails_at_copying_or_at_computing():
    system = "# Initial state\n--- notes.txt (12 bytes)\nkoala\nfern  \n"
    copied = PredictionTurn(id="c", domain="terminal", system=system, history=(), action="cat notes.txt",
                  reference="koala\nfern\n")  # fmt: skip
    counted = PredictionTurn(id="w", domain="terminal", system=system, history=(), action="wc -l notes.txt",
                   reference="2 notes.txt\n")  # fmt: skip
    earlier = PredictionTurn(id="e", domain="terminal", system=None, history=(("wc -l notes.txt", "2 notes.txt"),),
                   action="wc -l notes.txt", reference="2 notes.txt\n")  # fmt: skip
    silent = turn("", "rm notes.txt")
    assert [answer_source(t) for t in (copied, counted, earlier, silent)] == [
        "in the prompt", "elsewhere", "in the prompt", "empty"]  # fmt: skip
    figures = step_figures(
        "wm", [copied, counted, earlier, silent], ["koala", "2 notes.txt", None, ""], EmbeddedJudge()
    )
    assert list(figures["exact_by_source"]) == ["empty", "in the prompt", "elsewhere"]
    assert figures["exact_by_source"]["in the prompt"] == {"turns": 2, "exact_match": 0.0}  # a half copy is a miss
    assert figures["exact_by_source"]["elsewhere"] == {"turns": 1, "exact_match": 1.0}
    assert figures["exact_by_source"]["empty"] == {"turns": 1, "exact_match": 1.0}


def test_success_confusion():
    pairs = [(True, True), (True, False), (False, False), (True, None), (None, True)]
    confusion = success_confusion(pairs)
    assert confusion["episodes"] == 5 and confusion["decided"] == 3 and confusion["agreement"] == pytest.approx(2 / 3)
    assert confusion["matrix"]["real success"] == {"simulated success": 1, "simulated failure": 1,
                                                   "simulated undecided": 1}  # fmt: skip
    assert confusion["matrix"]["real undecided"]["simulated success"] == 1
    assert success_confusion([])["agreement"] is None
    assert confusion["real_outcomes"] == {"success": 2, "failure": 1}  # of the decided pairs
    assert one_sided(confusion["real_outcomes"]) is None


def test_agreement_over_real_episodes_that_all_ended_one_way_decides_nothing():
    all_failed = success_confusion([(False, False), (False, False), (None, True)])
    assert all_failed["agreement"] == 1.0 and "all failed" in one_sided(all_failed["real_outcomes"])
    assert "all succeeded" in one_sided(success_confusion([(True, True), (True, False)])["real_outcomes"])
    assert one_sided(success_confusion([(None, True), (False, None)])["real_outcomes"]) is None  # nothing decided


def test_replay_figures():
    def turns(*texts, exit_code=0):
        return [{"observation": {"content": t, "exit_code": exit_code}} for t in texts]

    episodes = [
        (turns("a", "b"), turns("a", "c"), True, True),  # one turn of two agrees; a real success
        (turns("x", "y"), turns("x"), True, False),  # the replay stopped after one turn; the success was not real
        (turns("fatal: no"), turns("ok", exit_code=0), False, False),
    ]
    figures = replay_figures(episodes)
    assert figures["turns"] == 5 and figures["exact_match"] == pytest.approx(2 / 5)
    assert figures["error_flag_agreement"] == pytest.approx(3 / 5)  # the missing turn and the error disagree
    assert figures["simulated_successes"] == 2 and figures["real_share_of_simulated_successes"] == 0.5


def test_turn_agreement_is_what_step_figures_count_turn_by_turn():
    """The per-turn 1/0 lists paired comparisons of rows read: an unanswered turn misses both, an empty answer
    matches an empty reference."""
    turns = [
        turn("a.txt\n"),
        turn("ls: cannot access 'x': No such file or directory", exit_code=2),
        turn("b"),
        turn(""),
    ]
    answers = ["<predicted_observation>a.txt</predicted_observation>", "total 0", None, ""]
    exact, flags = turn_agreement(turns, answers)
    assert exact == [1, 0, 0, 1] and flags == [1, 0, 0, 1]
    figures = step_figures("wm", turns, answers, EmbeddedJudge())
    assert figures["exact_match"] == sum(exact) / 4 and figures["error_flag_agreement"] == sum(flags) / 4
