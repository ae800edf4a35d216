"""sim-check's success agreement under both rules for a file comparison: the episodes simulated under the content
rule record the check's predicted exit code, from which the agreement the exit-code rule would have had is read."""

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


def simulated(check_answer: str, file_answer: str, file_check: str = "content"):
    world_model = ScriptedWorldModel(tagged("2 notes.txt"), tagged(check_answer), tagged(file_answer))
    env = SimulatedEnvironment(world_model, file_check=file_check)
    return run_episode(env, ScriptedPolicy(), COUNT_LINES, KEY, "run", seed=0)


def test_the_exit_code_rule_reads_the_recorded_exit_code_of_a_content_decided_episode():
    wrong_file = simulated("exit code: 0", "4")  # its file says failure, its exit code success
    assert outcome_success(wrong_file) is False and exit_code_success(wrong_file) is True
    right_file = simulated("exit code: 1", "5")
    assert outcome_success(right_file) is True and exit_code_success(right_file) is False


def test_success_agreement_is_reported_under_both_rules_when_the_content_rule_decided():
    real = simulated("exit code: 0", "5")  # stands for the real episode: it succeeded
    sim = simulated("exit code: 0", "4")
    figures = success_figures([SUITE], {KEY: real}, {KEY: sim}, PLAN)["all"]
    assert figures["agreement"] == 0.0 and figures["by_exit_code"]["agreement"] == 1.0
    by_exit_code = simulated("exit code: 0", "4", file_check="exit-code")
    figures = success_figures([SUITE], {KEY: real}, {KEY: by_exit_code}, PLAN)["all"]
    assert figures["agreement"] == 1.0 and "by_exit_code" not in figures  # nothing else was recorded
