from pathlib import Path

import pytest

from trajforge.evaluation.models import Sampling
from trajforge.evaluation.run import (
    Display,
    EvalConfig,
    EvalInputError,
    describe_sampling,
    evaluate,
    load_items,
    score_models,
)

BENCH = Path(__file__).resolve().parents[2] / "schemas" / "examples" / "agentworldbench.jsonl"


class Oracle:
    """Stands in for a model in this test of the run around it: answers with the real observation, tagged."""

    name, stage, folder = "oracle", "sft", None

    def __init__(self, references: dict[str, str]):
        self.references, self.seen = references, []

    def answer(self, messages: list[dict], sampling: Sampling) -> str | None:
        self.seen.append(sampling)
        action = messages[-1]["content"]
        return f"<think>x</think><predicted_observation>{self.references[action]}</predicted_observation>"

    def heldout_loss(self, rows) -> float | None:
        return None


class Silent(Oracle):
    name, stage = "silent", "untrained"

    def answer(self, messages, sampling):
        return None


def test_every_chat_model_is_asked_and_judged_alike_whatever_its_kind():
    config = EvalConfig(agentworldbench=BENCH, temperature=0.0, max_tokens=7, seed=3)
    items, rows, rejected = load_items(config, Display())
    assert items and rows == [] and rejected == []
    oracle = Oracle({item.action: item.reference for item in items})
    result = score_models([oracle, Silent({})], items, rows, rejected, config, Display())
    right, silent = result.reports
    assert right.model == "oracle" and right.scored == len(items) and right.format_compliance == 1.0
    assert silent.scored == len(items) and silent.unanswered == len(items) and silent.excluded == {}
    assert silent.pooled["overall"] == 0.0  # no answer is a miss on every turn, never a turn left out
    assert right.pooled["overall"] > 50 and result.stages == ["sft", "untrained"]
    assert {(s.temperature, s.max_tokens) for s in oracle.seen} == {(0.0, 7)} and len(result.details) == 2 * len(items)
    # one seed per item, the same on every run: items draw independent random numbers, reproducibly
    assert oracle.seen == [config.sampling.for_item(item.id) for item in items]
    assert len({s.seed for s in oracle.seen}) == len(items) == len({item.id for item in items})
    assert EvalConfig(seed=4).sampling.for_item(items[0].id) != oracle.seen[0]
    assert result.judge_label.startswith("embedded")


def test_a_run_without_items_or_models_names_what_to_give(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(EvalInputError, match="nothing to evaluate"):
        load_items(EvalConfig(agentworldbench=empty), Display())
    with pytest.raises(EvalInputError, match="give at least one --world-model"):
        evaluate(EvalConfig(agentworldbench=BENCH), lambda config, display: [])


def test_an_endpoint_that_cannot_be_reached_gives_no_answer_and_says_why():
    import socket

    from trajforge.endpoints import Endpoint
    from trajforge.evaluation.models import EndpointModel

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe closes
    heard = []
    model = EndpointModel(Endpoint(f"http://127.0.0.1:{port}/v1", "m", attempts=1), heard.append)
    assert model.answer([{"role": "user", "content": "ls"}], Sampling(0.6, 8, 0)) is None
    assert len(heard) == 1 and heard[0].startswith("endpoint:m: no answer (")
    assert (model.name, model.stage, model.folder, model.heldout_loss([{}])) == ("m", None, None, None)


def test_the_run_records_how_it_sampled_and_each_rows_paired_comparisons():
    config = EvalConfig(agentworldbench=BENCH)
    items, rows, rejected = load_items(config, Display())
    oracle = Oracle({item.action: item.reference for item in items})
    result = score_models([Silent({}), oracle], items, rows, rejected, config, Display())
    assert result.sampling == config.sampling_record() and result.reports[1].sampling == result.sampling
    assert result.sampling_text.startswith("sampled at temperature 0.6 (AgentWorldBench's evaluator's, kept to")
    assert "1 sample per turn, seed 0" in result.sampling_text
    assert "greedy (temperature 0)" in describe_sampling(EvalConfig(temperature=0.0).sampling_record())
    overall, tags = result.reports[1].paired  # sft against the stage before it, untrained; no baselines here
    assert (overall["row"], overall["against"], overall["measure"]) == ("sft", "untrained", "overall")
    assert overall["turns"] == len(items) and overall["low"] > 0 and overall["verdict"] == "higher than untrained"
    assert tags["measure"] == "format compliance" and tags["difference"] == 100.0 and tags["mean_against"] == 0.0
    assert result.reports[0].paired == []
