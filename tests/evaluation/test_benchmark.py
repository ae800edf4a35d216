import json
from dataclasses import replace

from PIL import Image
from typer.testing import CliRunner

from tests.builders import make_trajectory
from trajforge.evaluation.benchmark import line_turn, sample_turns, sampled_turns, score
from trajforge.evaluation.embedded import EmbeddedJudge
from trajforge.evaluation.judge import Judge, Judgement
from trajforge.evaluation.scores import Scores
from trajforge.evaluation.turns import PredictionTurn
from trajforge.pipelines.cli import app
from trajforge.schemas.formats.agentworldbench import export_folder
from trajforge.training.prompts import candidate

runner = CliRunner()


def test_sample_turns_like_agentworldbench():
    assert sample_turns(3) == [0, 1, 2]
    assert sample_turns(20) == [0, 5, 10, 15, 19]
    assert sample_turns(6) == [0, 2, 3, 4, 5]


def test_perfect_answers_score_100_and_pass_the_verifiers(corpus):
    items = sampled_turns(list(corpus)[:4], plain=True)
    perfect = score("oracle", items, [candidate("r", i.reference) for i in items], EmbeddedJudge())
    assert perfect.pooled["overall"] == 100.0 and perfect.verifier_accuracy == 1.0
    assert perfect.format_compliance == 1.0 and perfect.judge == "embedded" and "not comparable" in perfect.note
    raw = score("raw", items, [i.reference for i in items], EmbeddedJudge())  # a CPT model answers without tags
    assert raw.pooled == perfect.pooled and raw.format_compliance == 0.0
    wrong = score("wrong", items, ["Error: no such file" for _ in items], EmbeddedJudge())
    assert wrong.pooled["overall"] < 50 and wrong.verifier_accuracy < 1.0


class ScriptedJudge(Judge):
    """Scores by domain, and fails where the prediction says so: the aggregation around a judge, checked exactly."""

    name, comparable = "scripted", True

    def judge(self, turn, prediction):
        if prediction == "judge-fails":
            return Judgement(None, "judge answer not parseable: no JSON")
        return Judgement(Scores(5, 5, 5, 5, 5) if turn.domain == "mcp" else Scores(1, 1, 1, 1, 1))


def _item(domain: str, n: int) -> PredictionTurn:
    return PredictionTurn(f"{domain}-{n}", domain, None, (), "a", "obs")


def test_pooled_and_equal_weight_overall_over_every_turn_and_the_readers_aggregate_apart():
    items = [_item("mcp", i) for i in range(3)] + [_item("terminal", i) for i in range(3)]
    answers = ["x", "x", None, "x", "", "judge-fails"]
    report = score("m", items, answers, ScriptedJudge())
    # no answer is a miss and an empty prediction against "obs" is wrong: both scored (0); only the judge failure is
    # left without scores
    assert report.scored == 5 and report.samples == 6 and report.excluded == {"judge answer not parseable": 1}
    assert (report.empty_predictions, report.unanswered) == (1, 1)
    assert report.pooled["overall"] == 100 * 2 / 5  # two mcp turns at 100; a miss, a wrong and an empty one at 0
    assert report.equal_weight["overall"] == (100 * 2 / 3 + 0) / 2
    assert report.per_domain["terminal"] == {
        **dict.fromkeys(report.per_domain["terminal"], 0.0),
        "lines": 3,
        "scored": 2,
    }
    reader = report.agentworldbench_reader  # as the official reader: empty answers dropped, labelled as such
    assert reader["lines"] == 3 and reader["pooled"]["overall"] == 100 * 2 / 3 and "reader" in reader["label"]
    assert set(report.per_turn) == {item.id for item in items} and "overall" not in report.per_turn["terminal-2"]
    assert report.note is None and report.judge == "scripted"


class MustNotBeAsked(ScriptedJudge):
    def judge(self, turn, prediction):
        assert prediction.strip(), "an empty prediction is scored by the rule, not by the judge"
        return super().judge(turn, prediction)


def test_an_empty_prediction_is_right_where_the_real_observation_is_empty_and_no_answer_is_a_miss():
    empty, printed = PredictionTurn("e", "terminal", None, (), "mkdir d", ""), _item("terminal", 0)
    tagged = "<think>nothing to print</think><predicted_observation>\n</predicted_observation>"
    cases = [(empty, ""), (empty, tagged), (empty, "  \n"), (empty, None), (printed, ""), (printed, None)]
    turns = [replace(t, id=f"{t.id}-{i}") for i, (t, _) in enumerate(cases)]  # ids are unique in a run
    report = score("m", turns, [a for _, a in cases], MustNotBeAsked())
    overall = [values["overall"] for values in report.per_turn.values()]
    assert overall == [100.0, 100.0, 100.0, 0.0, 0.0, 0.0] and report.scored == 6
    assert report.empty_predictions == 4 and report.unanswered == 2
    assert [v["tagged"] for v in report.per_turn.values()] == [0, 1, 0, 0, 0, 0]
    assert report.format_compliance == 1 / 6  # over every turn asked
    assert report.verifier_accuracy == 3 / 6  # every turn has a rule: the 3 empty predictions of empty output pass
    assert report.agentworldbench_reader["lines"] == 0  # the official reader keeps no line of an empty answer


def test_a_model_that_answers_nothing_is_scored_on_every_turn(corpus):
    items = sampled_turns(list(corpus)[:4], plain=True)
    silent = score("silent", items, ["" for _ in items], EmbeddedJudge())
    speaking = score("speaking", items, [i.reference for i in items], EmbeddedJudge())
    assert silent.scored == speaking.scored == silent.samples == len(items)
    assert silent.turns_scored() == speaking.turns_scored()
    empty_references = sum(not i.reference.strip() for i in items)
    assert silent.pooled["overall"] == 100 * empty_references / len(items)


def test_eval_command_compares_with_untrained_and_exports(tmp_path, corpus_dir, tiny_checkpoint):
    result = runner.invoke(
        app,
        [
            "eval", "--world-model", str(tiny_checkpoint), "--untrained", "--corpus", str(corpus_dir),
            "--limit", "3", "--max-new-tokens", "8", "--report", str(tmp_path / "eval.json"),
            "--export", str(tmp_path / "bench"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "judge: embedded (embedded judge, not comparable with AgentWorldBench)" in result.output
    reports = json.loads((tmp_path / "eval.json").read_text())
    models = ["untrained", f"{tiny_checkpoint.parent.name}/checkpoint-2"]
    assert [r["model"] for r in reports] == [*models, "copy previous (model-free)", "retrieval (model-free)"]
    assert f"{models[1]}: per domain" in result.output and "(model-free): per domain" not in result.output
    assert all(0 <= r["pooled"]["overall"] <= 100 and r["samples"] > 0 for r in reports)
    assert all(r["judge"] == "embedded" and "not comparable" in r["note"] for r in reports)
    assert all(0 <= r["format_compliance"] <= 1 for r in reports)
    assert len({r["scored"] for r in reports}) == 1 and reports[0]["scored"] == reports[0]["samples"]
    assert all(r["sampling"] == {**reports[0]["sampling"], "seed": 0, "max_new_tokens": 8} for r in reports)
    text = " ".join(result.output.split())
    assert "sampled at temperature 0.6 (AgentWorldBench's evaluator's, kept to reproduce the benchmark)" in text
    assert f"every row scored on the same {reports[0]['scored']} turns" in text and "AgentWorldBench reader" in text
    assert all(len(r["paired"]) == 2 for r in reports[:2])  # each model against both baselines, on factuality
    assert all(p["turns"] == reports[0]["scored"] for r in reports for p in r["paired"])
    with Image.open(tmp_path / "eval.png") as chart:  # the table as a chart beside its JSON
        assert chart.format == "PNG" and chart.size[0] > 600
    lines = [
        json.loads(x) for f in sorted((tmp_path / "bench").glob("*_test.jsonl")) for x in f.read_text().splitlines()
    ]
    assert len(lines) == reports[0]["samples"]
    bad = tmp_path / "bench" / "bad_test.jsonl"
    bad.write_text(json.dumps({**lines[0], "turn_idx": len(lines[0]["prompt"]) + 1}) + "\n")
    again = runner.invoke(
        app,
        ["eval", "--world-model", str(tiny_checkpoint), "--agentworldbench", str(tmp_path / "bench"),
         "--max-new-tokens", "4",
         "--report", str(tmp_path / "again.json")],
    )  # fmt: skip
    assert again.exit_code == 1, again.output  # a line was rejected: named, listed, and the rest evaluated
    assert f"{bad}:line 1" in again.output and "is beyond its lists" in again.output
    report = json.loads((tmp_path / "again.json").read_text())[0]
    assert report["samples"] == len(lines) and report["rejected_lines"][0]["where"] == f"{bad}:line 1"


# A replay of the published evaluator's documented message building (infer: system_str, earlier prompt/response
# pairs, the current prompt; judge: history context, the ground truth response[turn_idx-1] with its header cleaned),
# written from that description, run on an exported folder and compared with what trajforge asks and judges.


def evaluator_infer_messages(job: dict) -> list[dict]:
    t = max(job.get("turn_idx", 1) - 1, 0)
    messages = [{"role": "system", "content": job["system_str"]}] if job.get("system_str") else []
    for j in range(t):
        messages += [
            {"role": "user", "content": job["prompt"][j]},
            {"role": "assistant", "content": job["response"][j]},
        ]
    return messages + [{"role": "user", "content": job.get("current_prompt") or job["prompt"][t]}]


def evaluator_judge_inputs(job: dict) -> tuple[str, str]:
    t = max(job.get("turn_idx", 1) - 1, 0)
    context = "".join(job["prompt"][i] + "\n" + job["response"][i] + "\n\n" for i in range(t))
    truth = job["response"][t]  # an IndexError here is what our old lines caused
    return context, truth.removeprefix("**Environment Observation:**\n")  # the header line, cleaned


def test_exported_lines_replay_through_the_evaluators_message_building(tmp_path):
    records = [make_trajectory(4, domain="terminal"), make_trajectory(3, domain="mcp")]
    export_folder(records, tmp_path)
    observations = {r.domain: [t.observation.content for t in r.turns] for r in records}
    count = 0
    for path in sorted(tmp_path.glob("*_test.jsonl")):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            job = json.loads(text)
            context, truth = evaluator_judge_inputs(job)
            assert truth == observations[job["task"]][job["turn_idx"] - 1]  # the truth it sees is our observation
            item = line_turn(job, f"{path}:line {number}")
            assert [{"role": r, "content": c} for r, c in item.messages] == evaluator_infer_messages(job)
            assert item.reference == truth and item.history_text() == context
            assert item.trajectory_id == f"{job['task']}:{job['id']}"  # a trajectory's lines: one interval cluster
            count += 1
    assert count == 7
