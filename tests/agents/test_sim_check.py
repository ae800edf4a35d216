"""sim-check's figures for a world model: single step on held-out corpus turns (with both baselines), success
agreement and WM2Real against episodes run for real in Docker, and controllability on episodes simulated under
sampled control specs. The world model here is a loopback endpoint whose answers the test decides (the Docker
episodes, the replays, the HTTP client and the simulator are real); a real checkpoint is checked in
tests/pipelines/commands/test_sim_check.py."""

import dataclasses
import json
import re

import pytest

from tests.chat_server import chat_server
from trajforge.agents.agent_eval import model_agent
from trajforge.agents.sim_check import (
    CheckedWorldModel,
    SimCheckConfig,
    SimCheckError,
    check_simulator,
    run_prefix,
    world_model_of,
)
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.simulation import Simulation
from trajforge.endpoints.model_ref import ModelRef, parse_model
from trajforge.schemas.sources import read_records
from trajforge.schemas.splits import SplitConfig

TASK = "project-dirs"  # mkdir -p project/{src,tests,docs}; ls -la project: in the test part under SPLIT
SPLIT = SplitConfig(seed=16)


def world_model(obedient: bool):
    """Answers the task's first action as the real shell does (no output), its second wrongly (an error where the
    real listing is), and, when `obedient`, an instructed intermittent error at its action."""

    def answer(request):
        messages = request["body"]["messages"]
        system, action = messages[0]["content"], messages[-1]["content"]
        n = sum(m["role"] == "user" for m in messages)
        if obedient and re.search(rf"action {n} fails with a temporary error", system):
            text = f"{action.split()[0]}: temporary failure: Resource temporarily unavailable"
        elif action.startswith("mkdir"):
            text = ""
        else:
            text = "ls: cannot access 'project': No such file or directory"
        tagged = f"<predicted_observation>{text}</predicted_observation>"  # as a template-prompted world model answers
        return 200, json.dumps({"choices": [{"message": {"role": "assistant", "content": tagged}}]}).encode()

    return chat_server(answer)


def config(tmp_path, corpus_dir, control, world: CheckedWorldModel, **fields) -> SimCheckConfig:
    run = CollectConfig(suites=("terminal",), tasks=(TASK,), output=str(tmp_path / "runs"), concurrency=1)
    simulation = Simulation(world.ref, control=str(control))
    return SimCheckConfig(corpus=str(corpus_dir), run=run, simulation=simulation, split=SPLIT, **fields)


def endpoint(text: str) -> ModelRef:
    return parse_model(text, "--world-model")


@pytest.fixture
def control(tmp_path):
    path = tmp_path / "control.yaml"
    path.write_text("horizon: 2\nfaults:\n  intermittent_error: {rate: 1.0, turns: [1, 1]}\n")
    return path


@pytest.mark.slow
def test_the_three_fidelity_figures_and_controllability_with_real_replays(tmp_path, corpus_dir, sandbox_image, control):
    with world_model(obedient=True) as (url, _), world_model_of(endpoint(f"{url}=fake-wm")) as world:
        checked = config(tmp_path, corpus_dir, control, world, simulated_success=lambda t: True)
        result = check_simulator(checked, world, log=lambda text: None, warn=lambda text: None)
    step = result["single_step"]["all"]
    assert set(step) == {"fake-wm", "copy previous (model-free)", "retrieval (model-free)"}
    assert len({figures["turns"] for figures in step.values()}) == 1  # the same turns for every row
    assert step["retrieval (model-free)"]["exact_match"] > step["fake-wm"]["exact_match"] == 0.0
    episodes = result["episodes"]
    group = "terminal/terminal"
    assert episodes["tasks"] == 1 and set(episodes["success"]) == {group, "all"}
    # the real episode succeeded, the (plugged-in) simulated success said so too
    assert episodes["success"]["all"]["matrix"]["real success"]["simulated success"] == 1
    assert episodes["success"]["all"]["agreement"] == 1.0
    # WM2Real: the simulated actions ran for real; the first turn's empty output agreed, the second did not
    (replay,) = [r.record for r in read_records([episodes["runs"]["replay"]])]
    (simulated,) = [r.record for r in read_records([episodes["runs"]["sim"]])]
    assert [t.action for t in replay.turns] == [t.action for t in simulated.turns]
    assert replay.source.kind == "collected" and "src" in replay.turns[1].observation.content
    wm2real = episodes["wm2real"]["all"]
    assert (wm2real["turns"], wm2real["exact_match"], wm2real["error_flag_agreement"]) == (2, 0.5, 0.5)
    assert wm2real["real_share_of_simulated_successes"] == 1.0  # the replayed actions did the task for real
    # controllability: told to fail action 1, it did; action 2 was clean
    controlled = episodes["controllability"]["all"]
    assert controlled["instructed_faults"] == 1 and controlled["produced_share"] == 1.0
    assert controlled["uninstructed_turns"] == 1 and controlled["clean_share"] == 1.0
    assert controlled["unanswered"] == {} and controlled["not_reached"] == {}  # the plan's 2 actions: both taken


@pytest.mark.slow
def test_a_world_model_that_ignores_its_instructions_scores_none(tmp_path, corpus_dir, sandbox_image, control):
    with world_model(obedient=False) as (url, _), world_model_of(endpoint(f"{url}=deaf-wm")) as world:
        result = check_simulator(config(tmp_path, corpus_dir, control, world), world, lambda t: None, lambda t: None)
    episodes = result["episodes"]
    assert episodes["controllability"]["all"]["produced_share"] == 0.0
    # the task's check ran in the world model, which answered it with an error: a simulated failure where the real
    # episode succeeded
    success = episodes["success"]["all"]
    assert success["decided"] == 1 and success["matrix"]["real success"]["simulated failure"] == 1
    assert success["agreement"] == 0.0


def test_bad_world_models_are_refused_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="give URL=MODEL"):
        parse_model("http://nowhere", "--world-model")
    with pytest.raises(SimCheckError, match="not a model folder"):
        with world_model_of(ModelRef(weights=str(tmp_path))):
            pass


def test_figures_below_the_thresholds_are_said():
    from trajforge.agents.sim_check import Thresholds, below_thresholds

    behind = {"low": -12.0, "describe": "-10.0 points [-12.0, -8.0] (paired, 20 turns)"}
    result = {
        "world_model": "wm",
        "single_step": {"all": {"wm": {"exact_match": 0.5, "judge_factuality": 10.0,
                                       "paired": {"copy previous (model-free)": {"exact_match": {"low": 0.1},
                                                                                 "judge_factuality": behind}}}}},
        "episodes": {"success": {"all": {"agreement": 0.9}}, "controllability": {"all": {"produced_share": 0.5}}},
    }  # fmt: skip
    warnings = below_thresholds(result)
    assert warnings == [
        "single-step exact match 50.0% is below 80%",
        "factuality is not above the baseline copy previous (model-free): " + behind["describe"],
        "instructed faults produced 50.0% is below 90%",
    ]
    lenient = below_thresholds(result, Thresholds(exact_match=0.5, faults_produced=0.5))
    assert lenient == [warnings[1]]  # a baseline not beaten on facts, on the same turns: said whatever the thresholds
    result["episodes"]["success"]["all"]["real_outcomes"] = {"success": 0, "failure": 14}
    assert below_thresholds(result, Thresholds(exact_match=0.5, faults_produced=0.5))[1:] == [
        "success agreement 90.0% decides nothing: the agent's real episodes all failed, so agreement only shows "
        "the world model predicts that too"
    ]


def test_a_figure_above_its_threshold_whose_interval_reaches_below_it_is_not_shown_to_reach_it():
    from trajforge.agents.sim_check import Thresholds, below_thresholds

    result = {
        "world_model": "wm",
        "single_step": {"all": {"wm": {"exact_match": 0.85, "exact_match_interval": [0.7, 0.95]}}},
        "episodes": {"success": {"all": {"agreement": 0.9, "agreement_interval": [0.88, 0.97]}},
                     "controllability": {"all": {"produced_share": 0.5, "produced_interval": [0.3, 0.7]}}},
    }  # fmt: skip
    assert below_thresholds(result) == [
        "single-step exact match 85.0% [70.0%, 95.0%] is not shown to reach 80%: its 95% interval reaches below it",
        "instructed faults produced 50.0% [30.0%, 70.0%] is below 90%",
    ]  # success agreement clears 85% with its whole interval
    assert below_thresholds(result, Thresholds(exact_match=0.7, faults_produced=0.3)) == []


def per_turn(exact: list, flags: list, factuality: list | None = None) -> dict:
    """A model's per-turn values as single_step pairs them (factuality None: the judge scored no turn)."""
    return {"exact_match": exact, "error_flag_agreement": flags, "judge_factuality": factuality or [None] * len(exact)}


def test_a_world_model_not_above_a_baseline_on_the_same_turns_is_said_with_its_paired_difference():
    from trajforge.agents.sim_check import below_thresholds, paired_with_baselines

    wm, copy, retrieval = per_turn([1, 1, 0, 1], [0] * 4), per_turn([1, 0, 0, 1], [0] * 4), per_turn([0] * 4, [0] * 4)
    paired = paired_with_baselines("wm", {"wm": wm, "copy": copy, "retrieval": retrieval}, ["g"] * 4, [1, 2, 3, 4])
    figures = {"exact_match": 0.9, "paired": paired["all"]}
    warnings = below_thresholds({"world_model": "wm", "single_step": {"all": {"wm": figures}}})
    assert warnings == [
        f"exact match is not above the baseline copy: {paired['all']['copy']['exact_match']['describe']}"
    ]
    assert paired["all"]["retrieval"]["exact_match"]["low"] > 0  # three more of four turns: above it


def faulted_corpus(tmp_path):
    """A corpus of four held-out real episodes of four actions each, some with an injected intermittent error that
    their instruction names."""
    from tests.collectors.fakes import FakeEnvironment
    from trajforge.collectors.episode import run_episode
    from trajforge.collectors.policies.scripted import ScriptedPolicy
    from trajforge.pipelines.build_corpus.config import BuildConfig
    from trajforge.pipelines.build_corpus.pipeline import build_corpus
    from trajforge.sandboxes.base import Task
    from trajforge.sandboxes.faults import FaultInjector
    from trajforge.schemas.records import Action
    from trajforge.schemas.sinks import write_segments

    records = []
    for k in range(4):
        actions = tuple(Action(kind="shell", content=f"touch f{k}-{i}") for i in range(4))
        env = FaultInjector(FakeEnvironment(), {"intermittent_error": 0.4}, seed=k)
        records.append(run_episode(env, ScriptedPolicy(), Task(id=f"t{k}", instruction="Touch.", actions=actions),
                                   f"s/t{k}#0", "run", seed=k))  # fmt: skip
    assert any(t.fault for r in records for t in r.turns)
    write_segments(records, tmp_path / "raw", per_file=4)
    build_corpus([str(tmp_path / "raw")], tmp_path / "corpus", BuildConfig(split=SplitConfig(held_out=1.0)), workers=1)
    return tmp_path / "corpus"


def test_single_step_measures_controllability_on_real_fault_injected_turns(tmp_path):
    """Held-out real episodes whose instruction says which action failed: a world model that follows it produces
    the fault there and nowhere else; copying the previous observation does not."""
    faulted_corpus(tmp_path)
    with world_model(obedient=True) as (url, _), world_model_of(endpoint(f"{url}=wm")) as world:
        checked = SimCheckConfig(corpus=str(tmp_path / "corpus"), episodes=False)
        warnings = []
        result = check_simulator(checked, world, log=lambda text: None, warn=warnings.append)
    figures = result["single_step"]["all"]
    # every task is held out: no training split to retrieve from, and the run says so
    assert set(figures) == {"wm", "copy previous (model-free)"}
    assert any("the retrieval baseline is left out" in w for w in warnings)
    ours, copy = figures["wm"]["controllability"], figures["copy previous (model-free)"]["controllability"]
    assert ours["instructed_faults"] > 0 and ours["produced_share"] == 1.0 and ours["clean_share"] == 1.0
    assert copy["instructed_faults"] == ours["instructed_faults"] and copy["produced_share"] < 1.0
    assert "episodes" not in result  # --no-episodes: no sandbox was started
    # the world model against the baseline on the same turns: the paired difference, the turns of an episode one cluster
    paired = figures["wm"]["paired"]["copy previous (model-free)"]["exact_match"]
    assert paired["n"] == figures["wm"]["turns"] == figures["copy previous (model-free)"]["turns"]
    expected = figures["wm"]["exact_match"] - figures["copy previous (model-free)"]["exact_match"]
    assert paired["difference"] == pytest.approx(expected) and "bootstrap over clusters" in paired["method"]
    assert result["sampling"]["single_step"] == {"temperature": 0.0, "max_tokens": 512, "seed": 0}
    from trajforge.pipelines.commands.sim_check import show
    from trajforge.pipelines.console import out

    with out.capture() as captured:
        show(result)
    text = " ".join(captured.get().split())
    assert (
        "greedy (temperature 0), <= 512 new tokens, seed 0" in text
        and "wm minus each baseline, paired on the same turns" in text
    )
    assert f"{100 * paired['difference']:+.1f} [{100 * paired['low']:+.1f}, {100 * paired['high']:+.1f}]" in text


def test_single_step_pairs_the_judges_factuality_with_each_baseline_and_shows_it(tmp_path):
    """Issue 54: factuality against a baseline is the paired difference on the same turns too (before: two means
    side by side), in the factuality column's 0-100 units, the turns of an episode one cluster; and every model's
    exact match is shown with its interval."""
    from trajforge.evaluation.paired import paired_difference
    from trajforge.evaluation.scores import normalize
    from trajforge.pipelines.commands.sim_check import show
    from trajforge.pipelines.console import out

    faulted_corpus(tmp_path)
    details: list[dict] = []
    with world_model(obedient=True) as (url, _), world_model_of(endpoint(f"{url}=wm")) as world:
        checked = SimCheckConfig(corpus=str(tmp_path / "corpus"), episodes=False)
        result = check_simulator(checked, world, log=lambda text: None, warn=lambda text: None, details=details)
    copy = "copy previous (model-free)"
    scored = {name: [d for d in details if d["model"] == name] for name in ("wm", copy)}
    factuality = {name: [normalize(d["scores"]["factuality"]) if d["scores"] else None for d in rows]
                  for name, rows in scored.items()}  # fmt: skip
    episodes = [d["id"].rsplit(":", 1)[0] for d in scored["wm"]]
    both = [i for i in range(len(episodes)) if factuality["wm"][i] is not None and factuality[copy][i] is not None]
    expected = paired_difference([factuality[copy][i] for i in both], [factuality["wm"][i] for i in both],
                                 [episodes[i] for i in both])  # fmt: skip
    figures = result["single_step"]["all"]
    paired = figures["wm"]["paired"][copy]["judge_factuality"]
    got = (paired["n"], paired["difference"], paired["low"], paired["high"])
    assert got == (expected.n, expected.difference, expected.low, expected.high)
    assert paired["mean_b"] == pytest.approx(figures["wm"]["judge_factuality"])  # the column's own units
    assert paired["mean_a"] == pytest.approx(figures[copy]["judge_factuality"]) and paired["low"] < paired["high"]
    for name in ("wm", copy):
        low, high = figures[name]["exact_match_interval"]
        assert low <= figures[name]["exact_match"] <= high and low < high
    with out.capture() as captured:
        show(result)
    text = " ".join(captured.get().split())
    assert f"{paired['difference']:+.1f} [{paired['low']:+.1f}, {paired['high']:+.1f}]" in text
    wm_exact, (low, high) = figures["wm"]["exact_match"], figures["wm"]["exact_match_interval"]
    assert f"{100 * wm_exact:.1f} [{100 * low:.1f}, {100 * high:.1f}]" in text


def test_a_changed_simulation_rule_gets_its_own_episode_runs_and_the_defaults_keep_their_names():
    world = CheckedWorldModel("wm", chat=None, ref=ModelRef(weights="folder"))
    default = SimCheckConfig()

    def prefix(**settings) -> str:
        return run_prefix(dataclasses.replace(default, simulation=Simulation(world.ref, **settings)), world)

    assert prefix() == run_prefix(default, world) == prefix(max_tokens=512)
    names = {prefix(), prefix(max_tokens=64)}
    assert len(names) == 2 and all(re.fullmatch(r"sim-check-[0-9a-f]{8}", name) for name in names)

    agent = dataclasses.replace(default, agent=model_agent("runs/agent"))
    sampled = dataclasses.replace(agent, run=dataclasses.replace(default.run, temperature=0.7))
    assert len({run_prefix(agent, world), run_prefix(sampled, world), run_prefix(default, world)}) == 3
    assert run_prefix(default, world) == run_prefix(dataclasses.replace(sampled, agent=default.agent), world)


def test_part_validation_measures_the_validation_turns_and_tasks_only(tmp_path, corpus_dir, control):
    from trajforge.agents.sim_episodes import EpisodePlan, held_out_tasks
    from trajforge.collectors.tasks import load_suite, task_split
    from trajforge.schemas.dataset import load_cpt, row_splits

    corpus = load_cpt(corpus_dir)
    rows = list(zip(corpus["trajectory_id"], row_splits(corpus), strict=True))
    sides = {
        part: {i for i, s in rows if s == side} for part, side in (("validation", "validation"), ("test", "held_out"))
    }
    assert sides["validation"] and sides["test"]
    with world_model(obedient=False) as (url, _), world_model_of(endpoint(f"{url}=wm")) as world:
        for part in ("validation", "test"):
            checked, details = config(tmp_path, corpus_dir, control, world, episodes=False, part=part), []
            check_simulator(checked, world, log=lambda text: None, warn=lambda text: None, details=details)
            assert {d["id"].rsplit(":", 1)[0] for d in details} == sides[part]  # every row of the part, no other
    terminal = load_suite("terminal")
    plan = EpisodePlan(CollectConfig(suites=("terminal",)), world_agent(), "wm", "check", part="validation")
    (suite,) = held_out_tasks(plan)
    assert [t.id for t in suite.tasks] == [t.id for t in terminal.tasks if task_split(terminal, t) == "validation"]


def world_agent():
    from trajforge.agents.agent_eval import EvaluatedAgent

    return EvaluatedAgent("scripted", "scripted")


def test_the_world_model_is_compared_with_each_baseline_paired_on_the_same_turns():
    """Issue 54: the world model's figures stood beside the baselines' unpaired; now its difference from each, on
    the same turns, has its own interval, the turns of one episode one cluster."""
    from trajforge.agents.sim_check import paired_with_baselines
    from trajforge.evaluation.paired import paired_difference

    wm = per_turn([1, 1, 1, 0, 1, 1], [1, 1, 1, 1, 1, 0])
    copy = per_turn([0, 1, 0, 0, 1, 0], [1, 1, 0, 1, 1, 0])
    groups, episodes = ["t/a", "t/a", "t/a", "w/b", "w/b", "w/b"], [1, 1, 2, 3, 3, 4]
    paired = paired_with_baselines("wm", {"wm": wm, "copy": copy}, groups, episodes)
    assert set(paired) == {"t/a", "w/b", "all"} and set(paired["all"]) == {"copy"}
    exact = paired["all"]["copy"]["exact_match"]
    assert exact["difference"] == pytest.approx(3 / 6)
    expected = paired_difference(copy["exact_match"], wm["exact_match"], episodes)
    assert (exact["low"], exact["high"]) == (expected.low, expected.high)
    terminal = paired["t/a"]["copy"]["error_flag_agreement"]
    assert terminal["n"] == 3 and terminal["difference"] == pytest.approx(1 / 3)
    assert exact["describe"].endswith("(paired, 6 turns)")
    assert paired["all"]["copy"]["judge_factuality"] is None  # no turn the judge scored for both: nothing to pair


def test_factuality_is_paired_on_the_turns_both_were_scored_on_a_case_worked_by_hand():
    """The judge's factuality (0-100, as the table's factuality column) of the world model minus a baseline's, on
    the same turns, an episode's turns one cluster of the bootstrap."""
    from trajforge.agents.sim_check import paired_with_baselines

    wm = per_turn([1, 1, 0, 1], [1] * 4, [100.0, 75.0, None, 50.0])  # the judge gave turn 3 no score
    copy = per_turn([0, 1, 0, 0], [1] * 4, [50.0, 75.0, 25.0, 0.0])
    paired = paired_with_baselines("wm", {"wm": wm, "copy": copy}, ["g"] * 4, [1, 1, 2, 3])["all"]["copy"]
    factuality = paired["judge_factuality"]
    # turns 1, 2 and 4 pair: differences 50, 0 and 50, in episodes 1, 1 and 3
    assert factuality["n"] == 3 and factuality["difference"] == pytest.approx(100 / 3)
    assert factuality["mean_b"] == 75.0 and factuality["mean_a"] == pytest.approx(125 / 3)
    # two episodes resampled: episode 1 twice (a quarter of the draws) gives 100/4, episode 3 twice 100/2, one of
    # each 100/3; the 2.5th and 97.5th percentiles are 25 and 50
    assert (factuality["low"], factuality["high"]) == (25.0, 50.0) and "bootstrap over clusters" in factuality["method"]
    assert factuality["describe"] == "+33.3 points [+25.0, +50.0] (paired, 3 turns)"  # 0-100 points, not x100
    assert factuality["unit"] == "factuality, 0-100 as judge_factuality"
    assert paired["exact_match"]["n"] == 4  # exact match pairs every turn


def test_every_models_exact_match_has_its_interval_over_turns_an_episodes_turns_one_cluster():
    """Six episodes of three turns, the first three answered exactly on every turn, the others on none: 50% exact,
    and since an episode's turns go together, its interval is that of six draws, wider than eighteen would give."""
    from trajforge.agents.sim_check import model_step_figures
    from trajforge.evaluation.factory import JudgeSpec
    from trajforge.evaluation.paired import clustered_share_interval
    from trajforge.evaluation.turns import PredictionTurn

    turns, answers, episodes = [], [], []
    for episode in range(6):
        for index in range(3):
            reference = f"made file{episode}-{index}"
            turn = PredictionTurn(id=f"e{episode}:{index}", domain="terminal", system=None, history=(),
                                  action=f"touch file{episode}-{index}", reference=reference,
                                  trajectory_id=f"e{episode}", turn_index=index)  # fmt: skip
            turns.append((turn, "terminal/t", {}))
            answers.append(reference if episode < 3 else "nothing")
            episodes.append(episode)
    figures = {"terminal/t": {}, "all": {}}
    values = model_step_figures("wm", turns, answers, episodes, JudgeSpec().build(), figures, None)
    wm = figures["all"]["wm"]
    low, high = wm["exact_match_interval"]
    assert wm["exact_match"] == 0.5 and low < 0.5 < high
    assert [low, high] == list(clustered_share_interval(values["exact_match"], episodes)[1:])
    _, turn_low, turn_high = clustered_share_interval(values["exact_match"], list(range(18)))  # each turn a draw
    assert high - low > turn_high - turn_low
    assert figures["terminal/t"]["wm"]["exact_match_interval"] == [low, high]  # the one group is all of them
    assert len(values["judge_factuality"]) == 18 and all(v is not None for v in values["judge_factuality"])


def test_several_samples_of_a_greedy_agent_are_refused():
    world = CheckedWorldModel("wm", chat=None, ref=ModelRef(weights="folder"))
    greedy = SimCheckConfig(agent=model_agent("runs/agent"), run=CollectConfig(repeats=2, temperature=0.0))
    with pytest.raises(ValueError, match="--temperature above 0"):
        check_simulator(greedy, world, log=print, warn=print)
