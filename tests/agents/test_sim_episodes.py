"""sim-check's success agreement under both rules for a file comparison: episodes simulated under the content
rule before it stopped asking the check's own turn (which shows the expected value) recorded the check's predicted
exit code, from which the agreement the exit-code rule would have had is read; episodes simulated now record none."""

import json

from tests.builders import ScriptedWorldModel, tagged
from tests.sandboxes.test_simulated import COUNT_LINES
from trajforge.agents.agent_eval import EvaluatedAgent
from trajforge.agents.sim_episodes import EpisodePlan, exit_code_success, outcome_success, success_figures
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.tasks import Suite
from trajforge.sandboxes.simulated import SimulatedEnvironment

SUITE = Suite(name="s", domain="terminal", path=None, tasks=(COUNT_LINES,))
KEY = "s/count-lines#0"
PLAN = EpisodePlan(CollectConfig(), EvaluatedAgent("scripted", "scripted"), "wm", "check")


def simulated(file_answer: str, file_check: str = "content"):
    world_model = ScriptedWorldModel(tagged("2 notes.txt"), tagged(""), tagged(file_answer))
    env = SimulatedEnvironment(world_model, file_check=file_check)
    return run_episode(env, ScriptedPolicy(), COUNT_LINES, KEY, "run", seed=0)


def recorded_before(trajectory, check_exit_code: int):
    """The episode as the content rule recorded it when it still asked the check's own turn first."""
    verifier = json.dumps(json.loads(trajectory.outcome.verifier) | {"check_exit_code": check_exit_code})
    return trajectory.model_copy(update={"outcome": trajectory.outcome.model_copy(update={"verifier": verifier})})


def test_the_exit_code_rule_reads_the_recorded_exit_code_of_a_content_decided_episode():
    wrong_file = recorded_before(simulated("4"), 0)  # its file says failure, its exit code success
    assert outcome_success(wrong_file) is False and exit_code_success(wrong_file) is True
    right_file = recorded_before(simulated("5"), 1)
    assert outcome_success(right_file) is True and exit_code_success(right_file) is False


def test_success_agreement_is_reported_under_both_rules_only_where_exit_codes_were_recorded():
    real = simulated("5")  # stands for the real episode: it succeeded
    sim = recorded_before(simulated("4"), 0)
    figures = success_figures([SUITE], {KEY: real}, {KEY: sim}, PLAN)["all"]
    assert figures["agreement"] == 0.0 and figures["by_exit_code"]["agreement"] == 1.0
    for now in (simulated("4"), simulated("exit code: 0", file_check="exit-code")):  # no check exit code recorded
        figures = success_figures([SUITE], {KEY: real}, {KEY: now}, PLAN)["all"]
        assert "by_exit_code" not in figures and "check_exit_code" not in json.loads(now.outcome.verifier)
