"""agent-eval's library: which tasks it runs (build-corpus's held-out ones), how it counts episodes into figures,
and real episodes in Docker: the scripted policy solves the held-out terminal tasks, the explorer does not, and a
second run resumes instead of running them again."""

import dataclasses
import json

import pytest

from tests.builders import make_trajectory
from trajforge.agents import agent_eval
from trajforge.agents.agent_eval import (
    AgentEvalConfig,
    AgentEvalError,
    EvaluatedAgent,
    evaluate_agents,
    held_out_suites,
    model_agent,
    policy_agent,
    score_agent,
)
from trajforge.collectors.collection import Collected
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.runner import RunResult
from trajforge.collectors.tasks import Suite, load_suite
from trajforge.endpoints.model_ref import ModelRef
from trajforge.evaluation.intervals import wilson_interval
from trajforge.evaluation.paired import clustered_mean_interval, paired_difference
from trajforge.sandboxes.base import ShellCheck, Task
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.sources import read_records
from trajforge.schemas.splits import SplitConfig, collected_task_key, split_of, task_identity


def episode(origin: str, status: str, turns: int = 2, error: str | None = None, model: str | None = None):
    return make_trajectory(
        n_turns=turns,
        source={"kind": "collected", "by": "llm", "run_id": "r", "origin": origin},
        agent={"name": "llm", "model": model},
        outcome={"status": status, "error": error},
    )


def test_the_held_out_tasks_are_the_ones_build_corpus_holds_out():
    terminal, split = load_suite("terminal"), SplitConfig(held_out=0.3, seed=5, validation=0.3)
    (held,), (validation,) = held_out_suites([terminal], split), held_out_suites([terminal], split, "validation")
    recorded = [recorded_episode(t).model_dump() for t in terminal.tasks]
    sides = [split_of(r, split) for r in recorded]
    for part, side in ((held, "held_out"), (validation, "validation")):
        expected = [t.id for t, s in zip(terminal.tasks, sides, strict=True) if s == side]
        assert [t.id for t in part.tasks] == expected and 0 < len(expected) < len(terminal.tasks)
    assert not {t.id for t in held.tasks} & {t.id for t in validation.tasks}
    assert held_out_suites([terminal], SplitConfig(held_out=0.0))[0].tasks == ()
    kvstore = load_suite("mcp-kvstore-gen")
    (whole,) = held_out_suites([kvstore], SplitConfig(held_out=0.0, held_out_families=("kvstore",)))
    assert whole.tasks == kvstore.tasks  # a family held out whole, as build-corpus --held-out-family holds it


def recorded_episode(task: Task):
    """An episode of `task` as the runner records it: its task's identity in its metadata."""
    meta = {"task_id": task.id, "task_key": task_identity(task.instruction, task.files)}
    return make_trajectory(source={"kind": "collected", "by": "scripted", "origin": f"terminal/{task.id}#0"},
                           metadata=json.dumps(meta))  # fmt: skip


def test_episodes_count_into_figures_and_errors_apart(tmp_path):
    check = ShellCheck(command="test -f done")
    tasks = (Task("a", "do a", check=check), Task("b", "do b", check=check, family="sorting"), Task("c", "do c"))
    suite = Suite("s", "terminal", None, tasks)
    places = {collected_task_key(f"s/{t.id}"): (suite, t) for t in suite.tasks}
    records = [
        episode("s/a#0", "success", turns=3),
        episode("s/a#1", "failure", turns=1),
        episode("s/b#0", "agent_error", turns=1, error="unparseable answer: the ```bash block is not closed"),
        episode("s/b#1", "timeout", turns=4),
        episode("s/b#2", "agent_error", turns=1, error="the model endpoint failed: 503"),
        episode("s/a#2", "infra_error", turns=0),
        episode("s/a#3", "task_error", turns=0),
        episode("s/c#0", "unknown", turns=2),
        episode("s/c#1", "timeout", turns=5),  # a task without a check says nothing of the agent, however it ends
        episode("other/a#0", "success", turns=9),  # a task this evaluation did not plan
    ]
    write_segments(records, tmp_path, per_file=4)
    collected = Collected("r", str(tmp_path), RunResult(planned=9, skipped=0), {})
    report = score_agent(EvaluatedAgent("tiny", "llm"), collected, places)
    figures = report.as_dict()["overall"]
    # a: success, failure; b: three failures (several samples of a task: the interval is a bootstrap over tasks)
    assert figures["success_rate"] == 1 / 5 and figures["samples_per_task"] == 3
    bootstrap = clustered_mean_interval([1, 0, 0, 0, 0], ["s/a", "s/a", "s/b", "s/b", "s/b"])[1:]
    assert figures["interval"] == pytest.approx(list(bootstrap))
    assert figures["pass_at_k"] == {"1": 0.25, "2": 0.5, "3": 0.0}  # pass@3: only b has three samples
    assert (figures["episodes"], figures["scored"], figures["mean_turns"]) == (9, 5, 10 / 5)
    assert (figures["unparseable"], figures["unparseable_rate"]) == (1, 1 / 5)
    assert (figures["infra_errors"], figures["task_errors"], figures["unchecked"]) == (1, 1, 2)
    assert list(report.per_family) == ["s", "sorting"] and list(report.per_suite) == ["s"]
    family, sorting = report.per_family["s"], report.per_family["sorting"]
    assert (family.successes, family.scored, family.unchecked) == (1, 2, 2)
    assert (sorting.successes, sorting.scored, sorting.unchecked) == (0, 3, 0)
    assert report.model_free
    write_segments([episode("s/a#4", "failure", model="tiny")], tmp_path)
    assert not score_agent(EvaluatedAgent("tiny", "llm"), collected, places).model_free


def test_a_group_without_scored_episodes_has_no_rate():
    figures = agent_eval.Score(infra_errors=2).as_dict()
    assert figures["success_rate"] is None and figures["interval"] is None and figures["mean_turns"] is None


def test_agents_are_named_by_their_own_flags():
    endpoint = model_agent("http://127.0.0.1:8000/v1=tiny")
    assert (endpoint.label, endpoint.policy) == ("tiny @ http://127.0.0.1:8000/v1", "llm")
    assert endpoint.model.endpoint.model == "tiny" and endpoint.settings == {"policy": "llm", "agent": endpoint.model}
    assert model_agent("runs/agent") == EvaluatedAgent("runs/agent", "checkpoint", ModelRef(weights="runs/agent"))
    assert policy_agent("scripted") == EvaluatedAgent("scripted", "scripted")
    with pytest.raises(ValueError, match="give URL=MODEL"):
        model_agent("http://127.0.0.1:8000/v1")
    with pytest.raises(AgentEvalError, match="--policy llm: give --agent MODEL"):
        policy_agent("llm")
    with pytest.raises(ValueError, match="unknown policy 'oracle'"):
        policy_agent("oracle")


def test_nothing_to_evaluate_is_refused_before_any_episode():
    with pytest.raises(AgentEvalError, match="name an agent"):
        evaluate_agents(AgentEvalConfig(), print, print)
    config = AgentEvalConfig((policy_agent("scripted"),), CollectConfig(suites=("swe",)), SplitConfig(held_out=0.0))
    with pytest.raises(AgentEvalError, match="no test task in swe"):
        evaluate_agents(config, print, print)


@pytest.mark.slow
def test_scripted_solves_the_held_out_terminal_tasks_and_explorer_does_not(tmp_path, sandbox_image):
    run = CollectConfig(suites=("terminal",), output=str(tmp_path), image=sandbox_image, max_turns=8)
    split = SplitConfig(held_out=0.15)  # the test part then holds two of the terminal suite's tasks with a check
    config = AgentEvalConfig((policy_agent("scripted"), policy_agent("explorer")), run, split)
    result = evaluate_agents(config, print, print)
    held = [t.id for t in held_out_suites([load_suite("terminal")], config.split)[0].tasks]
    assert result.held_out == {"terminal": held}
    scripted, explorer = result.reports
    assert scripted.overall.scored >= 2 and scripted.overall.successes == scripted.overall.scored
    assert explorer.overall.scored == scripted.overall.scored and explorer.overall.successes == 0
    assert scripted.overall.infra_errors == explorer.overall.infra_errors == result.errors == 0
    assert scripted.model_free and explorer.model_free
    written = [r.record for r in read_records([scripted.run_dir])]
    assert sorted(r.source.origin for r in written) == sorted(f"terminal/{task}#0" for task in held)
    again = evaluate_agents(dataclasses.replace(config, agents=config.agents[:1]), print, print)
    (resumed,) = again.reports
    assert (resumed.run_dir, resumed.ran, resumed.skipped) == (scripted.run_dir, 0, len(held))
    assert resumed.as_dict()["overall"] == scripted.as_dict()["overall"] and scripted.ran == len(held)


@pytest.mark.slow
def test_generated_tasks_are_counted_by_their_family(tmp_path, sandbox_image):
    suite = tmp_path / "mixed.yaml"
    suite.write_text(
        "suite: mixed\ndomain: terminal\n"
        "tasks:\n  - {id: hello, instruction: Write hello to a.txt., actions: ['echo hello > a.txt'], "
        "check: grep -qx hello a.txt}\n"
        "generated:\n  - {family: terminal-text, count: 6, seed: 3}\n"
    )
    run = CollectConfig(suites=(str(suite),), output=str(tmp_path / "raw"), image=sandbox_image, max_turns=8)
    config = AgentEvalConfig((policy_agent("scripted"),), run, SplitConfig(held_out=1.0))
    (report,) = evaluate_agents(config, print, print).reports
    assert list(report.per_family) == ["mixed", "terminal-text"]
    assert (report.per_family["mixed"].successes, report.per_family["mixed"].scored) == (1, 1)
    assert (report.per_family["terminal-text"].successes, report.per_family["terminal-text"].scored) == (6, 6)
    assert report.overall.interval == pytest.approx(wilson_interval(7, 7))


@pytest.mark.slow
def test_a_limit_runs_the_first_held_out_tasks_only(tmp_path, sandbox_image):
    suite = tmp_path / "gen.yaml"
    suite.write_text("suite: gen\ndomain: terminal\ngenerated:\n  - {family: terminal-text, count: 40, seed: 3}\n")
    run = CollectConfig(suites=(str(suite),), output=str(tmp_path / "raw"), image=sandbox_image, max_turns=8)
    config = AgentEvalConfig((policy_agent("scripted"),), run, SplitConfig(held_out=0.3), limit=3)
    said = []
    result = evaluate_agents(config, said.append, print)
    held = [t.id for t in held_out_suites([load_suite(str(suite))], config.split)[0].tasks]
    assert len(held) > 3 and result.held_out == {"gen": held[:3]}
    (report,) = result.reports
    assert report.ran == report.overall.scored == report.overall.successes == 3
    assert f"--limit 3: 3 of the {len(held)} test tasks" in said


def test_agent_eval_and_sim_check_act_greedily_unless_told():
    """Issue 54: agent-eval sampled at collect's 0.7 unless given --temperature, and sim-check had no option."""
    import typer

    from trajforge.pipelines.cli import app

    commands = typer.main.get_command(app).commands
    for name in ("agent-eval", "sim-check"):
        (temperature,) = [p for p in commands[name].params if p.name == "temperature"]
        assert temperature.default == 0.0, name
    assert AgentEvalConfig().run.temperature == 0.0


def test_several_samples_of_a_greedy_model_are_refused_before_any_episode():
    from typer.testing import CliRunner

    from trajforge.pipelines.cli import app

    config = AgentEvalConfig((model_agent("runs/agent"),), dataclasses.replace(AgentEvalConfig().run, repeats=3))
    with pytest.raises(AgentEvalError, match="--repeats 3 at --temperature 0"):
        evaluate_agents(config, print, print)
    result = CliRunner().invoke(app, ["agent-eval", "--agent", "runs/agent", "--repeats", "2"])
    assert result.exit_code == 2 and "--temperature above 0" in result.output
    model_free = dataclasses.replace(config, agents=(policy_agent("explorer"),), split=SplitConfig(held_out=0.0))
    with pytest.raises(AgentEvalError, match="no test task"):  # a seeded policy's repeats differ: not refused
        evaluate_agents(model_free, print, print)


def test_pass_at_k_is_the_unbiased_estimator():
    from itertools import combinations

    outcomes = {"t1": [1, 0, 0, 1], "t2": [0, 0, 0, 0], "t3": [1, 1, 1, 0]}
    score = agent_eval.Score(outcomes=outcomes)
    for k in (1, 2, 3, 4):
        drawn = [[any(c) for c in combinations(o, k)] for o in outcomes.values()]  # every draw of k samples
        assert score.pass_at(k) == pytest.approx(sum(sum(d) / len(d) for d in drawn) / 3)
    assert agent_eval.pass_ks(1) == [1] and agent_eval.pass_ks(4) == [1, 2, 4] and agent_eval.pass_ks(6) == [1, 2, 4, 6]


def _report(label: str, outcomes: dict[str, list[int]], model_free: bool = False):
    score = agent_eval.Score(outcomes=outcomes)
    score.successes = sum(map(sum, outcomes.values()))
    score.failures = sum(map(len, outcomes.values())) - score.successes
    agent = EvaluatedAgent(label, label, None) if model_free else model_agent(label)
    return agent_eval.AgentReport(agent, "run", model_free, score, {}, {})


def test_rows_are_compared_with_the_first_by_their_paired_difference():
    """Issue 54: rows of the same tasks were compared by two unpaired intervals side by side."""
    tasks = [f"s/t{i}" for i in range(30)]
    first = {t: [int(i % 3 == 0)] for i, t in enumerate(tasks)}
    better = {t: [int(i % 3 == 0 or i % 5 == 0)] for i, t in enumerate(tasks)}  # every success of the first, more
    result = agent_eval.AgentEvalResult({"s": tasks}, SplitConfig(), [_report("a", first), _report("b", better)])
    ((row, difference),) = result.paired
    expected = paired_difference([first[t][0] for t in tasks], [better[t][0] for t in tasks])
    assert row.agent.label == "b" and difference == expected and difference.excludes_zero()
    recorded = result.as_dict()
    assert recorded["reference"] == "a" and "paired_vs_reference" not in recorded["agents"][0]
    assert recorded["agents"][1]["paired_vs_reference"]["difference"] == pytest.approx(4 / 30)
    assert recorded["sampling"] == {"temperature": 0.0, "samples_per_task": 1, "seed": 0}
    # the same rates unpaired: a's and b's Wilson intervals overlap, so side by side they would read as no difference
    low_b = wilson_interval(14, 30)[0]
    assert low_b < wilson_interval(10, 30)[1]


def test_with_several_samples_a_task_is_one_cluster_of_the_paired_difference():
    a = {"s/x": [1, 1, 0], "s/y": [0, 0, 0]}
    b = {"s/x": [1, 1, 1], "s/y": [1, 0, 0]}
    difference = agent_eval.paired_success(agent_eval.Score(outcomes=a), agent_eval.Score(outcomes=b))
    clusters = ["s/x"] * 3 + ["s/y"] * 3
    assert difference == paired_difference([1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0], clusters)
    assert "bootstrap over clusters" in difference.method


def test_the_table_states_how_it_sampled_and_prints_the_paired_difference():
    from trajforge.pipelines.commands.agent_eval import show
    from trajforge.pipelines.console import out

    tasks = ["s/x", "s/y"]
    reports = [
        _report("scripted", {t: [1, 1] for t in tasks}, model_free=True),
        _report("tiny", {t: [1, 0] for t in tasks}),
    ]
    sampling = agent_eval.EpisodeSampling(0.7, 2, 5)
    reports[1].batch_check = {"episodes": 8, "same_actions": 7, "successes_batched": 5, "successes_alone": 4}
    with out.capture() as captured:
        show(agent_eval.AgentEvalResult({"s": tasks}, SplitConfig(), reports, sampling=sampling))
    text = " ".join(captured.get().split())
    assert "temperature 0.7, 2 samples per task, seed 5" in text and "pass@2 %" in text
    assert "against the reference row tiny, paired" in text  # the first model, not the model-free row listed first
    assert (
        "tiny: batch check, 8 episodes run again one at a time: 7 took the same actions; successes 5 batched, 4 alone"
        in text
    )
    assert "scripted (model-free): +50.0 points" in text and "(paired, 4 samples, a task's one cluster)" in text


def test_a_batch_check_reruns_a_greedy_models_first_tasks_one_at_a_time(tmp_path, monkeypatch):
    """What agent-eval --batch-check compares: the batched run's episodes against the same tasks run alone (the
    episodes here are written by a stand-in for collect; the runs themselves are collect's, tested there)."""
    tasks = ("terminal/a", "terminal/b", "terminal/c")
    batched_dir, runs = tmp_path / "batched", []

    def fake_collect(run, log, warn, progress):
        runs.append(run)
        actions = {"terminal/a": 2, "terminal/b": 3}  # alone, b takes one action more and fails
        records = [episode(f"{t}#0", "success" if n == 2 else "failure", turns=n, model="tiny")
                   for t, n in actions.items() if t in run.tasks]  # fmt: skip
        write_segments(records, tmp_path / run.run_id)
        return Collected(run.run_id, str(tmp_path / run.run_id), RunResult(planned=len(records), skipped=0), {})

    write_segments([episode(f"{t}#0", "success", turns=2, model="tiny") for t in tasks], batched_dir)
    monkeypatch.setattr(agent_eval, "collect", fake_collect)
    run = CollectConfig(suites=("terminal",), tasks=tasks, temperature=0.0, concurrency=4)
    batched = Collected("batched", str(batched_dir), RunResult(planned=3, skipped=0), {})
    check = agent_eval.batch_check(run, batched, 2, print, print, lambda items, description, total: items)
    (alone,) = runs
    assert alone.tasks == tasks[:2] and alone.concurrency == 1 and alone.run_id == "batched-batch1"
    assert (check["tasks"], check["episodes"], check["same_actions"]) == (2, 2, 1)
    assert (check["successes_batched"], check["successes_alone"]) == (2, 1)


@pytest.mark.slow
def test_a_greedy_checkpoint_in_docker_is_compared_paired_and_checked_at_batch_one(tmp_path, sandbox_image):
    """The command end to end: a tiny random checkpoint acts greedily (the default) beside the scripted policy on
    three held-out tasks; the report states the sampling, pairs the scripted row against the model's, and holds the
    batch-1 check of the model's episodes."""
    import json

    from typer.testing import CliRunner

    from tests.agents.conftest import TEXTS
    from trajforge.pipelines.cli import app
    from trajforge.training.configs import TinyModelConfig
    from trajforge.training.model import build_tiny_model
    from trajforge.training.tokenizer import train_tokenizer

    folder = tmp_path / "tiny"
    tokenizer = train_tokenizer(TEXTS, vocab_size=400)
    config = TinyModelConfig(hidden_size=32, intermediate_size=64, layers=2, heads=2, max_positions=1024)
    build_tiny_model(config, tokenizer, seed=0).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    report = tmp_path / "agent-eval.json"
    args = ["agent-eval", "--policy", "scripted", "--agent", str(folder), "--limit", "3", "--max-turns", "2",
            "--concurrency", "3", "--image", sandbox_image, "-o", str(tmp_path / "raw"),
            "--report", str(report)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    figures = json.loads(report.read_text())
    assert figures["sampling"] == {"temperature": 0.0, "samples_per_task": 1, "seed": 0}
    assert figures["reference"] == str(folder)
    scripted, model = figures["agents"]
    both = set(scripted["outcomes"]) & set(model["outcomes"])  # the tasks both scored (a task without a check: none)
    assert scripted["paired_vs_reference"]["n"] == len(both) > 0 and "paired_vs_reference" not in model
    tasks = sum(len(ids) for ids in figures["held_out_tasks"].values())  # at most --limit 3 of the test part
    assert 0 < model["batch_check"]["episodes"] == tasks <= 3 and scripted["batch_check"] is None
    assert "greedy (temperature 0), 1 sample per task, seed 0" in " ".join(result.output.split())
