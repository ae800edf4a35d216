"""sim-check's success agreement: a simulated file comparison is decided by the file's predicted content alone. An
episode simulated before the check's own turn (which shows the expected value) stopped being asked recorded the
check's predicted exit code beside it; no second agreement is read from it any more."""

import json

from tests.builders import ScriptedWorldModel, tagged
from tests.sandboxes.test_simulated import COUNT_LINES
from trajforge.agents.agent_eval import EvaluatedAgent
from trajforge.agents.sim_episodes import EpisodePlan, success_figures
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.tasks import Suite
from trajforge.sandboxes.simulated import SimulatedEnvironment

SUITE = Suite(name="s", domain="terminal", path=None, tasks=(COUNT_LINES,))
KEY = "s/count-lines#0"
PLAN = EpisodePlan(CollectConfig(), EvaluatedAgent("scripted", "scripted"), "wm", "check")


def simulated(file_answer: str):
    world_model = ScriptedWorldModel(tagged("2 notes.txt"), tagged(""), tagged(file_answer))
    return run_episode(SimulatedEnvironment(world_model), ScriptedPolicy(), COUNT_LINES, KEY, "run", seed=0)


def recorded_before(trajectory, check_exit_code: int):
    """The episode as the simulator recorded it when it still asked the check's own turn first."""
    verifier = json.dumps(json.loads(trajectory.outcome.verifier) | {"check_exit_code": check_exit_code})
    return trajectory.model_copy(update={"outcome": trajectory.outcome.model_copy(update={"verifier": verifier})})


def test_success_agreement_reads_the_file_content_rule_only_even_where_an_exit_code_was_recorded():
    real = simulated("5")  # stands for the real episode: it succeeded
    for sim, agreed in ((simulated("4"), 0.0), (recorded_before(simulated("4"), 0), 0.0), (simulated("5"), 1.0)):
        figures = success_figures([SUITE], {KEY: real}, {KEY: sim}, PLAN)["all"]
        assert figures["agreement"] == agreed and figures["decided"] == 1
        assert "by_exit_code" not in figures  # the exit-code rule (its expected value shown to the model) is gone


def test_success_agreement_has_its_interval_over_tasks_a_tasks_repeats_one_cluster():
    """Two tasks of four repeats each: the simulator agrees with every real episode of one and none of the other.
    50% agreement; resampling the two tasks gives 0, 50% or 100%, so its interval is [0, 1], wider than eight
    independent episodes would give. Where every episode agrees, it is Wilson's interval over the tasks, not a point."""
    from dataclasses import replace

    from trajforge.evaluation.paired import clustered_share_interval

    other = replace(COUNT_LINES, id="other")
    suite = Suite(name="s", domain="terminal", path=None, tasks=(COUNT_LINES, other))
    right, wrong = simulated("5"), simulated("4")
    keys = [f"s/{task}#{r}" for task in ("count-lines", "other") for r in range(4)]
    real = dict.fromkeys(keys, right)
    sim = {k: right if k.startswith("s/count-lines") else wrong for k in keys}
    figures = success_figures([suite], real, sim, PLAN)["all"]
    assert figures["agreement"] == 0.5 and figures["agreement_interval"] == [0.0, 1.0]
    _, low, high = clustered_share_interval([1.0] * 4 + [0.0] * 4, list(range(8)))  # each episode a draw
    assert 0.0 < low < 0.5 < high < 1.0
    agreeing = success_figures([suite], real, real, PLAN)["all"]
    low, high = agreeing["agreement_interval"]
    assert agreeing["agreement"] == 1.0 and high == 1.0 and 0.3 < low < 0.4  # Wilson's for 2 of 2 tasks
