"""A trajforge suite as a verifiers environment (verifiers 0.4, `verifiers.v1`): a taskset of the suite's tasks and
an `Env` whose `run` steps a `TextEnvironment` with each of the agent's replies, the environment playing the user
(as verifiers' own TextArena and OpenEnv tasksets do; verifiers 0.4 has no `MultiTurnEnv.env_response`, this is
its place). `load_environment(**kwargs)` builds the config and calls `vf.load_environment`, which finds both here by
the taskset id `trajforge` once this module is imported.

An episode is laid out as trajforge's own agents act (training/agent_render.py `agent_messages`): the system
prompt names the actions and how to write them, the first user turn is the first observation and the task, each
reply is read with trajforge's action codec (a ```bash block, a <tool_call>, ...) and taken in a sandbox of the
episode's own, real or in a world model, its observation the next user turn; a reply with no action ends it and
the task's check decides the reward `check` (1 or 0), recorded on the trace with the status
(`trace.info["trajforge"]`). The agent's harness is verifiers' `null` chat program (no tools of its
own: it never runs a command outside the sandbox), run as a local subprocess unless told otherwise."""

import asyncio
import sys
from collections.abc import Iterator

import verifiers.v1 as vf

from trajforge.collectors.suite_env import OpenSuite, open_suite
from trajforge.training.agent_render import TASK_MESSAGE, agent_messages

TASKSET_ID = "trajforge"


class TrajforgeTasksetConfig(vf.TasksetConfig):
    id: str = TASKSET_ID
    suite: str = "terminal"
    """A bundled suite name or a suite .yaml path."""
    tasks: list[str] = []
    """Only these task ids (default: every task of the suite)."""
    part: str = "train"
    """The tasks' part: train (the training split: a trainer never sees a validation or test task), validation,
    test or all (collectors/suite_env.py `OpenSuite.tasks_in`)."""
    world_model: str | None = None
    """Run the suite in this world model (a checkpoint folder, smollm2, or URL=MODEL), as `collect --world-model`."""
    simulation: dict = {}
    """The simulation's settings (collectors/simulation.py `Simulation`: prompt, max_tokens, ...)."""
    max_turns: int = 30
    command_timeout: float = 10.0
    image: str | None = None


class TrajforgeData(vf.TaskData):
    info: dict
    """The suite and the task id the env starts an episode of."""


class TrajforgeTask(vf.Task[TrajforgeData, vf.State, vf.TaskConfig]):
    pass


class TrajforgeTaskset(vf.Taskset[TrajforgeTask, TrajforgeTasksetConfig]):
    """The suite's tasks; the suite is opened once (Docker started, a simulated suite grounded, its model loaded)."""

    def __init__(self, config: TrajforgeTasksetConfig) -> None:
        super().__init__(config)
        self.opened: OpenSuite = open_suite(
            config.suite, config.world_model, tasks=tuple(config.tasks), max_turns=config.max_turns,
            image=config.image, command_timeout=config.command_timeout, run_id="verifiers", log=lambda text: None,
            **config.simulation,
        )  # fmt: skip

    def load(self) -> Iterator[TrajforgeTask]:
        suite, tools = self.opened.suite, self.opened.action_space()
        for task in self.opened.tasks_in(self.config.part):
            system = agent_messages(task.instruction, tools)[0]["content"]
            data = TrajforgeData(name=f"{suite.name}/{task.id}", id=task.id, system_prompt=system,
                                 info={"suite": suite.name, "task_id": task.id})  # fmt: skip
            yield TrajforgeTask(data, self.config.task)


class TrajforgeEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime=vf.SubprocessConfig())


class TrajforgeEnv(vf.Env[TrajforgeEnvConfig]):
    async def run(self, task, agents):
        opened: OpenSuite = self.taskset.opened
        environment = await asyncio.to_thread(opened.environment)
        try:
            ours = opened.task(task.data.info["task_id"])
            first = await asyncio.to_thread(environment.reset, ours)
            async with agents.player.interaction(task) as interaction:
                reward, info = await self._episode(interaction, environment, first, ours.instruction)
        finally:
            await asyncio.to_thread(environment.close)
        interaction.trace.record_reward("check", reward)
        interaction.trace.info["trajforge"] = {"task_id": task.data.info["task_id"], **info}

    @staticmethod
    async def _episode(interaction, environment, first: str, instruction: str) -> tuple[float, dict]:
        """Each reply a step, each observation the next turn, until the episode ends: its reward and how it ended
        (or `unfinished`, with no reward, when the agent's run stopped first: a harness limit or error)."""
        segment = await interaction.turn(TASK_MESSAGE.format(initial_state=first, instruction=instruction))
        while not segment.terminated:
            observation, reward, done, info = await asyncio.to_thread(environment.step, segment.last_reply)
            if done:
                return reward, info
            segment = await interaction.turn(observation)
        return 0.0, {"status": "unfinished", "error": "the agent's run stopped before the episode ended"}


def load_environment(**kwargs) -> vf.Env:
    """The verifiers environment of a suite: `load_environment(suite="terminal", world_model=None, tasks=[...])`
    (TrajforgeTasksetConfig's fields), for verifiers' eval and training code."""
    return vf.load_environment(TrajforgeEnvConfig(taskset=TrajforgeTasksetConfig(**kwargs)))


__all__ = ["TrajforgeEnv", "TrajforgeTaskset", "load_environment"]
# verifiers imports a taskset id as `verifiers.v1.tasksets.<id>`, else as a top-level module `<id>` (a dotted path
# fails there): this module answers to the first.
sys.modules.setdefault(f"verifiers.v1.tasksets.{TASKSET_ID}", sys.modules[__name__])
