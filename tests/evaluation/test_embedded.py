import json

import pytest

from trajforge.evaluation.embedded import EmbeddedJudge, judge_reference
from trajforge.evaluation.scores import DIMENSIONS
from trajforge.evaluation.turns import PredictionTurn

CURATION_THRESHOLD = 3.5
REFERENCE = json.dumps({"id": "row_0007", "title": "Importer", "budget": 12000, "path": "/srv/data/imports"})
OLD_LISTING = (
    "total 8\n-rw-r--r-- 1 agent agent 14 Nov 30 08:00 notes.txt\n-rw-r--r-- 1 agent agent 20 Nov 30 08:00 todo.md"
)
NEW_LISTING = OLD_LISTING.replace("total 8", "total 12") + "\n-rw-r--r-- 1 agent agent 0 Nov 30 08:01 report.csv"


def test_exact_prediction_scores_five_everywhere():
    scores = judge_reference(REFERENCE, REFERENCE)
    assert scores.as_dict() == dict.fromkeys(DIMENSIONS, 5.0)
    assert scores.normalized() == dict.fromkeys(DIMENSIONS, 100.0)
    assert judge_reference(REFERENCE + "\n", REFERENCE).mean == 5.0  # trailing whitespace is not content


@pytest.mark.parametrize(
    ("prediction", "reference", "history"),
    [
        ("Success", "bash: /etc/shadow: Permission denied", ()),
        ("Success", "Permission denied", ()),
        ("Success", "bash: foo: command not found", ()),
        (OLD_LISTING, NEW_LISTING, (("ls -l", OLD_LISTING), ("touch report.csv", ""))),
    ],
    ids=["success-for-permission-denied", "success-for-denied-bare", "success-for-command-not-found", "stale-listing"],
)
def test_the_gaming_cases_fall_below_the_curation_threshold(prediction, reference, history):
    assert judge_reference(prediction, reference, history).mean < CURATION_THRESHOLD


def test_each_dimension_sees_its_own_failure():
    wrong_facts = REFERENCE.replace("row_0007", "row_0008").replace("12000", "13000")
    not_json = "Importer has a budget of 12000"
    invented = REFERENCE.replace("/srv/data/imports", "/opt/secret/place")
    exact = judge_reference(REFERENCE, REFERENCE)
    assert judge_reference(wrong_facts, REFERENCE).factuality < exact.factuality
    assert judge_reference(not_json, REFERENCE).format < judge_reference(wrong_facts, REFERENCE).format
    assert judge_reference(invented, REFERENCE).consistency < exact.consistency
    known = (("cat config", "/opt/secret/place"),)
    assert judge_reference(invented, REFERENCE, known).consistency > judge_reference(invented, REFERENCE).consistency
    assert judge_reference(REFERENCE[:20], REFERENCE).realism < exact.realism


def test_a_stale_copy_is_fine_where_the_environment_repeated_itself():
    history = (("ls -l", OLD_LISTING),)
    assert judge_reference(OLD_LISTING, OLD_LISTING, history).mean == 5.0


def test_the_judge_names_itself_and_refuses_no_answer():
    judge = EmbeddedJudge()
    assert "not comparable with AgentWorldBench" in judge.label
    assert not judge.judge(PredictionTurn("", "terminal", None, (), "ls", "a"), None).ok
    assert judge.judge(PredictionTurn("", "terminal", None, (), "ls", "a"), "a").scores.mean == 5.0
