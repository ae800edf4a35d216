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
