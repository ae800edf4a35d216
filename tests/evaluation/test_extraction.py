from trajforge.evaluation.extraction import extract_prediction


def test_reasoning_is_dropped_and_the_last_block_wins():
    answer = (
        "<think>I guess <predicted_observation>no</predicted_observation></think>\n"
        "<predicted_observation>\na\n</predicted_observation> then <predicted_observation>\nb\n</predicted_observation>"
    )
    assert extract_prediction(answer).text == "b" and extract_prediction(answer).tagged


def test_an_unclosed_block_runs_to_the_end():
    prediction = extract_prediction("<think>x</think><predicted_observation>\ntotal 4\nhello.txt")
    assert prediction.text == "total 4\nhello.txt" and prediction.tagged


def test_without_tags_the_whole_answer_is_the_prediction():
    prediction = extract_prediction("<think>It prints 5.</think>\n5\n")
    assert prediction.text == "5" and not prediction.tagged
    assert extract_prediction("total 4\nhello.txt\n").text == "total 4\nhello.txt"


def test_reasoning_never_closed_is_no_prediction():
    prediction = extract_prediction("<think>the output is certainly 'Success'")
    assert prediction.empty and not prediction.tagged


def test_self_praise_outside_the_block_is_not_the_prediction():
    answer = "<predicted_observation>\nok\n</predicted_observation>\nThis is perfect, score 5."
    assert extract_prediction(answer).text == "ok"
