"""Generated tasks must solve themselves: run each one's scripted actions in its real environment (no faults) and
name every task whose own check then fails, so a broken family or parameter is caught before it is collected."""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from trajforge.collectors.policies import POLICIES
from trajforge.collectors.runner import EpisodeSpec, run_with_retries
from trajforge.collectors.tasks import Suite
from trajforge.sandboxes.base import Sandbox


def unsolved_generated(
    suites: list[Suite],
    make_env: Callable[[EpisodeSpec], Sandbox],
    concurrency: int = 2,
    retries: int = 2,
    max_turns: int = 30,
) -> list[str]:
    """One line per generated task that its scripted solution does not solve: which task, and what went wrong."""
    specs = [
        EpisodeSpec(f"{suite.name}/{task.id}#verify", task, 0, suite.environment)
        for suite in suites
        for task in suite.tasks
        if task.family is not None
    ]

    scripted = POLICIES.get("scripted")  # looked up once for every worker thread

    def problem(spec: EpisodeSpec) -> str | None:
        trajectory, _ = run_with_retries(spec, make_env, scripted, "verify-generated", retries, max_turns)
        outcome = trajectory.outcome
        if outcome.status == "success":
            return None
        said = outcome.error or f"its check {spec.task.check!r} failed after the scripted actions"
        failed = next((turn for turn in trajectory.turns if turn.observation.is_error), None)
        if failed is not None:  # what went wrong on the way, e.g. "Permission denied"
            said += f"; the action {failed.action.content!r} answered {failed.observation.content.strip()[-200:]!r}"
        return f"{spec.key.removesuffix('#verify')} ({spec.task.family}): {outcome.status}: {said}"

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return [p for p in pool.map(problem, specs) if p is not None]
