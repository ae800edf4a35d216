"""The model-free baselines: copy the previous observation, and retrieval from the training split; scored on the
same turns as the models in every eval run, labelled model-free."""

from tests.builders import make_trajectory
from trajforge.evaluation.baselines import COPY_PREVIOUS, RETRIEVAL, CopyPrevious, Retrieval, initial_state_of
from trajforge.evaluation.run import Display, EvalConfig, evaluate
from trajforge.evaluation.turns import TEMPLATES, corpus_turn


def row(**fields) -> dict:
    return make_trajectory(**fields).model_dump(mode="json")


def messages(turn) -> list[dict]:
    return [{"role": r, "content": c} for r, c in turn.messages]


def test_copy_previous_answers_the_last_observation_or_the_initial_state():
    turns = [
        {"index": 0, "action": {"kind": "shell", "content": "ls"}, "observation": {"content": "a.txt"}},
        {"index": 1, "action": {"kind": "shell", "content": "wc -l a.txt"}, "observation": {"content": "3 a.txt"}},
    ]
    record = row(turns=turns, initial_state="/work holds a.txt", simulation_instruction="Be exact.")
    copy = CopyPrevious()
    for plain in (True, False):  # the plain system prompt, and every world-model template around it
        assert copy.answer(messages(corpus_turn(record, 1, plain=plain))) == "a.txt"
        assert copy.answer(messages(corpus_turn(record, 0, plain=plain))) == "/work holds a.txt"
    for template in TEMPLATES:
        system = template.format(system="# Task\nx\n\n# Initial state\nstart\nhere\n\n# Simulation instruction\ny")
        assert initial_state_of(system) == "start\nhere"
    assert copy.answer([{"role": "user", "content": "ls"}]) is None  # nothing to copy: no answer, not ""
    assert "model-free" in COPY_PREVIOUS and "model-free" in RETRIEVAL


def test_retrieval_answers_what_followed_the_most_similar_training_action():
    retrieval = Retrieval(
        [("cat notes.txt", "hello"), ("wc -l notes.txt", "3 notes.txt"), ("ls -la /tmp", "total 0"), ("ls", "a b")]
    )
    ask = lambda action: retrieval.answer([{"role": "user", "content": action}])  # noqa: E731
    assert ask("wc -l notes.txt") == "3 notes.txt"  # the same action
    assert ask("wc -l other.txt") == "3 notes.txt"  # the rarer shared words decide
    assert ask("ls -la /var") == "total 0" and ask("ls") == "a b"
    assert ask("qqq") is None
    rows = [row(turns=[{"index": 0, "action": {"kind": "tool_call", "name": "get", "content": '{"k": 1}'},
                        "observation": {"content": "v1"}}])]  # fmt: skip
    assert Retrieval.from_rows(rows).answer([{"role": "user", "content": 'get {"k": 1}'}]) == "v1"


def test_every_eval_run_carries_both_baselines_on_the_same_turns(corpus_dir):
    class Echo:
        name, stage, folder = "echo", None, None

        def answer(self, messages, sampling):
            return messages[-1]["content"]

        def heldout_loss(self, rows):
            return None

    config = EvalConfig(corpus=str(corpus_dir), temperature=0.0, max_tokens=8)
    result = evaluate(config, lambda config, display: [Echo()], Display())
    assert [r.model for r in result.reports] == ["echo", COPY_PREVIOUS, RETRIEVAL]
    assert len({r.samples for r in result.reports}) == 1 and all(r.scored for r in result.reports)
    copy = [d for d in result.details if d["model"] == COPY_PREVIOUS]
    assert [d["id"] for d in copy] == [d["id"] for d in result.details if d["model"] == "echo"]
    assert len({r.scored for r in result.reports}) == 1  # every row on the same turns, empty answers included
    from trajforge.evaluation.paired_rows import baseline_reading

    lines = baseline_reading(result.comparisons)  # echo against each baseline, paired; the baselines not judged
    assert [line.split(",")[0] for line in lines] == [f"echo vs {COPY_PREVIOUS}", f"echo vs {RETRIEVAL}"]
    for line, comparison in zip(lines, result.comparisons, strict=True):
        assert "factuality" in line and f"(paired, {result.reports[0].scored} turns" in line
        assert line.endswith(f"{comparison.verdict}.") and comparison.difference.n == result.reports[0].scored
    copy_facts = result.reports[1].pooled["factuality"]
    assert result.comparisons[0].difference.mean_a == copy_facts  # the baseline's mean over the same turns
    only_models = evaluate(EvalConfig(corpus=str(corpus_dir), baselines=False), lambda c, d: [Echo()], Display())
    assert [r.model for r in only_models.reports] == ["echo"]
