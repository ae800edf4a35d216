import pytest

from tests.evaluation.judge_server import judge_server
from trajforge.endpoints import Endpoint
from trajforge.evaluation.endpoint import EndpointJudge, JudgeAnswerError, judge_messages, parse_judge_answer
from trajforge.evaluation.rubrics import load_rubrics
from trajforge.evaluation.scores import Scores
from trajforge.evaluation.turns import PredictionTurn

TURN = PredictionTurn("t:1", "terminal", None, (("ls", "a.txt"),), "cat a.txt", "hello")


def test_answers_are_read_from_the_final_evaluation_block():
    answer = 'Draft {"format": 1}\n<final_evaluation>{"scores": {"format": 5, "factuality": 4.4, "consistency": 9,'
    answer += ' "realism": 0, "quality": 3}, "total_score": 4}</final_evaluation>'
    assert parse_judge_answer(answer) == Scores(5, 4, 5, 1, 3)  # clamped to integers 1-5
    published = '{"format_score": 100, "factuality_score": 75, "consistency_score": 50, "realism_score": 25, '
    published += '"quality_score": 0}'
    assert parse_judge_answer(published) == Scores(5, 4, 3, 2, 1)  # a 0-100 rubric's scale
    with pytest.raises(JudgeAnswerError, match="not JSON"):
        parse_judge_answer("<final_evaluation>{scores: five}</final_evaluation>")
    with pytest.raises(JudgeAnswerError, match="no numeric 'quality'"):
        parse_judge_answer('{"format": 5, "factuality": 5, "consistency": 5, "realism": 5}')


def test_the_judge_is_asked_as_the_benchmark_asks():
    system, user = judge_messages(TURN, "hello", "RUBRIC")
    assert system == {"role": "system", "content": "RUBRIC"}
    assert user["content"].startswith(
        "# Context (Historical Interactions):\n\nls\na.txt\n\n# Current Turn:\n\ncat a.txt"
    )
    assert (
        "**World Model Output (Simulated):**\n```\nhello\n```\n\n**Ground Truth (Real Output):**\n```\nhello\n```"
        in user["content"]
    )


def test_rubrics_per_domain_and_a_users_folder(tmp_path):
    rubrics = load_rubrics()
    assert "terminal world model" in rubrics["terminal"] and "<final_evaluation>" in rubrics["mcp"]
    (tmp_path / "defi").mkdir()
    (tmp_path / "defi" / "judge_system_prompt.txt").write_text("DeFi rubric")
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "judge_system_prompt.txt").write_text("my MCP rubric")
    mine = load_rubrics(tmp_path)
    assert mine["mcp"] == "my MCP rubric" and mine["defi"] == "DeFi rubric" and mine["terminal"] == rubrics["terminal"]
    with pytest.raises(FileNotFoundError, match="judge_system_prompt.txt"):
        load_rubrics(tmp_path / "defi")


def test_a_real_endpoint_scores_fails_and_times_out(monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", "sekrit")
    with judge_server(slow_seconds=3) as (url, requests):
        judge = EndpointJudge(Endpoint(url, "judge-model", key_env="MY_JUDGE_KEY", timeout=1, attempts=2))
        assert judge.judge(TURN, "hello").scores == Scores(2, 2, 2, 2, 2) and judge.name == "endpoint:judge-model"
        assert requests[0]["authorization"] == "Bearer sekrit" and requests[0]["body"]["model"] == "judge-model"
        assert "terminal world model" in requests[0]["body"]["messages"][0]["content"]
        silent = judge.judge(PredictionTurn("", "mcp", None, (), "x", "JUDGE-SAYS-NOTHING"), "y")
        assert not silent.ok and silent.failure.startswith("judge answer not parseable")
        slow = judge.judge(PredictionTurn("", "mcp", None, (), "x", "JUDGE-SLEEPS"), "y")
        assert not slow.ok and slow.failure.startswith("judge timed out") and url in slow.failure
        assert len(requests) == 1 + 2 + 2  # each failure retried
        assert not judge.judge(PredictionTurn("", "mcp", None, (), "x", "y"), None).ok  # no answer: nothing to judge


def test_a_judge_the_endpoint_refuses_altogether_stops_the_run():
    from tests.chat_server import chat_server
    from trajforge.endpoints import EndpointError

    for status, stops in ((401, True), (404, True), (400, False)):
        with chat_server(lambda request, status=status: (status, b"no")) as (url, requests):
            judge = EndpointJudge(Endpoint(url, "judge-model", key_env="NO_SUCH_VARIABLE"))
            if stops:  # a missing key, an unknown model: every later line would fail alike
                with pytest.raises(EndpointError, match=f"refused the request: HTTP {status}"):
                    judge.judge(TURN, "hello")
            else:  # this request only: the line is excluded, the run goes on
                assert judge.judge(TURN, "hello").failure.startswith(f"judge request failed: the endpoint {url}")
        assert len(requests) == 1
