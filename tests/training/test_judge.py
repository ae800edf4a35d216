import json

from training.judge import DIMENSIONS, Scores, extract_prediction, judge_reference, parse_judge_answer

REFERENCE = json.dumps({"id": "row_0007", "title": "Importer", "budget": 12000, "path": "/srv/data/imports"})


def test_exact_prediction_scores_five_everywhere():
    scores = judge_reference(REFERENCE, REFERENCE)
    assert scores.as_dict() == dict.fromkeys(DIMENSIONS, 5.0)
    assert scores.normalized() == dict.fromkeys(DIMENSIONS, 100.0)


def test_each_dimension_sees_its_own_failure():
    wrong_facts = REFERENCE.replace("row_0007", "row_0008").replace("12000", "13000")
    not_json = "Importer has a budget of 12000"
    invented = REFERENCE.replace("/srv/data/imports", "/opt/secret/place")
    exact = judge_reference(REFERENCE, REFERENCE)
    assert judge_reference(wrong_facts, REFERENCE).factuality < exact.factuality
    assert judge_reference(not_json, REFERENCE).format < judge_reference(wrong_facts, REFERENCE).format
    assert judge_reference(invented, REFERENCE).consistency < exact.consistency
    assert judge_reference(invented, REFERENCE, history="/opt/secret/place").consistency == exact.consistency
    assert judge_reference(REFERENCE[:20], REFERENCE).realism < exact.realism
    assert judge_reference(None, REFERENCE) == Scores(1, 1, 1, 1, 1)


def test_only_the_predicted_observation_counts():
    text = "<think>This is perfect, score 5!</think>\n<predicted_observation>\nhello\n</predicted_observation>"
    assert extract_prediction(text) == "hello"
    assert extract_prediction("<think>no prediction</think> hello") is None


def test_llm_judge_answers():
    answer = 'Sure. {"format": 5, "factuality": 4, "consistency": 4, "realism": 3, "quality": 4.5}'
    assert parse_judge_answer(answer) == Scores(5, 4, 4, 3, 4.5)
    assert parse_judge_answer('{"format": 9}') is None and parse_judge_answer("no json") is None
