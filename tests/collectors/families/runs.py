"""Scripted episodes of generated tasks in their real environments, for the family tests."""

import dataclasses

from trajforge.collectors.environments import Settings, build_environment
from trajforge.collectors.tasks import Suite, load_suite
from trajforge.collectors.verify import unsolved_generated


def first_tasks(suite_name: str, count: int) -> Suite:
    suite = load_suite(suite_name)
    return dataclasses.replace(suite, tasks=suite.tasks[:count])


def doing_nothing(suite: Suite) -> Suite:
    """The suite with every task's scripted solution taken away: its scripted episodes end at once, so each check
    decides on the starting state (and a check that passes there passes for an agent that does nothing)."""
    return dataclasses.replace(suite, tasks=tuple(dataclasses.replace(t, actions=()) for t in suite.tasks))


def unsolved(suite: Suite, docker_client, sandbox_image: str) -> list[str]:
    settings = Settings(run_id="pytest", image=sandbox_image, command_timeout=10, docker_client=docker_client)
    return unsolved_generated([suite], lambda spec: build_environment(spec.environment, settings), concurrency=2)
