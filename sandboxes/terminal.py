"""A Docker terminal: a persistent shell (`shell` actions) and a tmux pane (`keystrokes` actions) in a container.

This is the paper's Terminal, SWE and OS domains. Isolation is on by default (sandboxes/containers.py). When the
agent exhausts processes, memory or disk, the episode ends with a labelled ResourceLimitExceeded; a container
or daemon failure is an InfraError, which the runner retries.
"""

import json
import signal
import time

import docker
import docker.errors

from trajforge.sandboxes import keystrokes
from trajforge.sandboxes.base import (
    EpisodeEnded,
    InfraError,
    ResourceLimitExceeded,
    Sandbox,
    ShellCheck,
    Task,
    TaskSetupError,
)
from trajforge.sandboxes.containers import Limits, start_container
from trajforge.sandboxes.image import REPOSITORY
from trajforge.sandboxes.shell import DEFAULT_MAX_OUTPUT, PersistentShell, ShellDied, ShellResult, ansi_c_quote
from trajforge.sandboxes.starting_state import WORKDIR, StartingState
from trajforge.schemas.check_turn import (
    check_turn,
    compared_file,
    exit_code_command,
    exit_code_observation,
    file_command,
    file_turn,
)
from trajforge.schemas.records import Action, Observation

SHELL_TOOL = {
    "name": "shell",
    "description": "Run a bash command in a persistent shell (cwd, variables and background jobs carry over). "
    "The observation is the output (stdout and stderr), the exit code and the working directory.",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}


TOOLS = {"shell": SHELL_TOOL, "keystrokes": keystrokes.TOOL}


def action_space(tools: tuple[str, ...] = tuple(TOOLS)) -> list[dict]:
    """The terminal's tools: a shell command, or keystrokes into a tmux pane (a suite may offer only some)."""
    return [TOOLS[name] for name in tools]


# Builtins only: it must run even when the sandbox cannot fork. cgroup v1 paths first, then v2.
PROBE = (
    "for __f in /sys/fs/cgroup/pids/pids.current /sys/fs/cgroup/pids.current; do "
    "[ -r $__f ] && read -r __p < $__f && break; done; __o=0; "
    "for __f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do "
    '[ -r $__f ] && while read -r __k __v; do [ "$__k" = oom_kill ] && __o=$__v; done < $__f && break; done; '
    '__tf_probe="$__p $__o"'
)
DISK_FULL = ("No space left on device", "Disk quota exceeded")
# What bash prints when fork() fails with EAGAIN: the pids limit (the probe may read the counter a moment early).
FORK_FAILED = ("fork: retry: Resource temporarily unavailable", "fork: Resource temporarily unavailable")
CHECK_TIMEOUT_S = 60
STATE_READS = 3  # reads of /work's tar before an empty one is an infrastructure error


class DockerTerminal(Sandbox):
    name = "docker-terminal"

    def __init__(
        self,
        image: str = f"{REPOSITORY}:latest",
        run_id: str = "adhoc",
        owner: int = 0,
        limits: Limits = Limits(),
        command_timeout: float = 10.0,
        max_output: int = DEFAULT_MAX_OUTPUT,
        client: docker.DockerClient | None = None,
        tools: tuple[str, ...] = tuple(TOOLS),
    ):
        if not tools or set(tools) - set(TOOLS):
            raise ValueError(f"terminal tools {list(tools)}: expected some of {', '.join(TOOLS)}")
        self.tools = tuple(tools)
        self.image = image
        self.run_id, self.owner = run_id, owner
        self.limits = limits
        self.command_timeout = command_timeout
        self.max_output = max_output
        self.client = client or docker.from_env()
        self.container = None
        self.shell: PersistentShell | None = None
        self._tmux_started = False
        self._oom_kills = 0

    # -- lifecycle ---------------------------------------------------------------------------------------
    def reset(self, task: Task) -> Observation:
        self.close()
        image = task.image or self.image
        try:
            self.container = start_container(self.client, image, self.run_id, self.limits, self.owner)
            argv = ["docker", "exec", "-i", self.container.id, "setsid", "-w", "bash", "--noprofile", "--norc"]
            self.shell = PersistentShell(argv, self._signal_group, self.max_output, probe=PROBE)
        except (docker.errors.DockerException, ShellDied) as exc:
            self.close()
            raise InfraError(f"could not start the sandbox ({image}): {exc}") from exc
        self._tmux_started = False
        self._oom_kills = 0
        for path, content in task.files.items():
            self._setup(
                f'mkdir -p "$(dirname {ansi_c_quote(path)})" && '
                f"printf %s {ansi_c_quote(content)} > {ansi_c_quote(path)}"
            )
        for command in task.setup:
            if not isinstance(command, str):
                raise TaskSetupError(f"a terminal task's setup is shell commands, got {command!r}")
            self._setup(command)
        listing = self._run("cd /work && ls -la")
        return Observation(content=listing.output, metadata=json.dumps({"cwd": listing.cwd}))

    def _setup(self, command: str) -> None:
        try:
            result = self._run(command, timeout=max(60.0, self.command_timeout))
        except InfraError:
            raise
        except EpisodeEnded as exc:  # e.g. `exit 3`: the shell is gone before the first turn, by the task's doing
            raise TaskSetupError(f"setup command ended the episode ({exc.reason}): {command[:200]}") from exc
        if result.exit_code != 0:
            raise TaskSetupError(f"setup command failed ({result.exit_code}): {command[:200]}\n{result.output[-1000:]}")

    def close(self) -> None:
        if self.shell is not None:
            self.shell.close()
            self.shell = None
        if self.container is not None:
            try:
                self.container.remove(force=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError:
                time.sleep(1)  # a fork bomb can make the first kill slow; one more try
                try:
                    self.container.remove(force=True)
                except docker.errors.DockerException:
                    pass
            self.container = None

    def action_space(self) -> list[dict]:
        return action_space(self.tools)

    def describe(self) -> dict:
        digest = None
        if self.container is not None:
            digest = self.container.image.id
        return {"name": self.name, "version": self.image, "image_digest": digest, "backend": "docker"}

    # -- actions -----------------------------------------------------------------------------------------
    def step(self, action: Action) -> Observation:
        if self.shell is None:
            raise RuntimeError("step() before reset()")
        if action.kind == "shell" and "shell" in self.tools:
            return self._shell_step(action.content)
        if action.kind == "keystrokes" and "keystrokes" in self.tools:
            return self._keystrokes_step(action.content)
        offered = " or ".join(self.tools)
        return Observation(content=f"unsupported action kind {action.kind!r}: use {offered}", is_error=True)

    def _shell_step(self, command: str) -> Observation:
        result = self._run(command)
        observation = Observation(
            content=result.output,
            exit_code=result.exit_code,
            is_error=result.exit_code != 0,
            truncated=result.truncated,
            metadata=json.dumps({"cwd": result.cwd, "timed_out": result.timed_out}),
        )
        self._check_limits(result, observation)
        return observation

    def _keystrokes_step(self, content: str) -> Observation:
        try:
            keys = keystrokes.parse(content)
        except ValueError as exc:
            return Observation(content=str(exc), is_error=True)
        if not self._tmux_started:
            self._run(keystrokes.START)
            self._tmux_started = True
        sent = self._run(keystrokes.send_command(keys))
        self._check_limits(sent, None)
        time.sleep(keys.duration)
        pane = self._run(keystrokes.CAPTURE)
        self._check_limits(pane, None)
        return Observation(content=pane.output.rstrip("\n"), metadata=json.dumps({"pane": keystrokes.SESSION}))

    def _run(self, command: str, timeout: float | None = None) -> ShellResult:
        try:
            return self.shell.run(command, timeout or self.command_timeout)
        except ShellDied as exc:
            observation = Observation(content=exc.output, is_error=True)
            if not self._container_running():
                raise InfraError(f"the container died: {exc}", observation) from exc
            # A shell that could no longer fork (a fork bomb filled the pids limit) dies as well: say why.
            if any(m in exc.output for m in FORK_FAILED) or self._processes() >= self.limits.pids - 8:
                self._limit(
                    "processes", f"the shell died at {self._processes()} of {self.limits.pids} processes", observation
                )
            raise EpisodeEnded(f"the shell ended: {exc}", observation) from exc

    def _processes(self) -> int:
        """The container's process count, from the daemon (the shell inside may be unable to say)."""
        try:
            stats = self.container.stats(stream=False, one_shot=True)
        except docker.errors.DockerException:
            return 0
        return int((stats.get("pids_stats") or {}).get("current") or 0)

    def _container_running(self) -> bool:
        try:
            self.container.reload()
        except docker.errors.DockerException:
            return False
        return self.container.status == "running"

    def _signal_group(self, pgid: int, sig: int) -> None:
        if sig == signal.SIGINT:
            cmd = ["kill", "-INT", "--", f"-{pgid}"]
        else:  # everything in the shell's group but the shell itself
            cmd = ["sh", "-c", f"for p in $(pgrep -g {pgid}); do [ $p = {pgid} ] || kill -KILL $p; done"]
        try:
            self.container.exec_run(cmd, user="1000:1000")
        except docker.errors.DockerException:
            pass

    def _check_limits(self, result: ShellResult, observation: Observation | None) -> None:
        pids, _, oom = result.probe.partition(" ")
        if (pids.isdigit() and int(pids) >= self.limits.pids - 8) or any(m in result.output for m in FORK_FAILED):
            self._limit("processes", f"{pids} of {self.limits.pids} processes", observation)
        if oom.isdigit() and int(oom) > self._oom_kills:
            self._oom_kills = int(oom)
            self._limit("memory", f"out of memory at {self.limits.memory}", observation)
        if any(marker in result.output for marker in DISK_FULL):
            self._limit("disk", f"workspace full at {self.limits.workspace}", observation)

    def _limit(self, kind: str, detail: str, observation: Observation | None) -> None:
        raise ResourceLimitExceeded(f"resource limit: {kind} ({detail})", observation)

    def starting_state(self, task: Task) -> StartingState:
        """The files in /work (the task's, and whatever its setup left), read through a tar of it: not through the
        shell, whose state the first turn gets untouched."""
        for _ in range(STATE_READS):
            try:
                result = self.container.exec_run(
                    ["tar", "--ignore-failed-read", "-C", WORKDIR, "-cf", "-", "."], user="1000:1000", demux=True
                )
            except docker.errors.DockerException as exc:
                raise InfraError(f"could not read the starting state of /work: {exc}") from exc
            archive, errors = result.output
            if result.exit_code != 0:
                detail = (errors or b"").decode(errors="replace")
                raise InfraError(f"could not read the starting state of /work: {detail}")
            if archive:  # a tar holds at least its end blocks: no bytes at all is output the exec lost (under load)
                return StartingState.of_tar(archive)
        raise InfraError(f"could not read the starting state of /work: tar's output was empty {STATE_READS} times")

    def check(self, task: Task) -> bool | None:
        self._check_turn = {}  # none recorded unless this check runs (never the previous episode's)
        if not isinstance(task.check, ShellCheck):
            return None
        if self.container is None:
            return False
        code, output = self._check_command(task.check.command)
        action = Action(kind="shell", content=exit_code_command(task.check.command))
        self._check_turn = check_turn(action, exit_code_observation(output, code))
        if (compared := compared_file(task.check.command)) is not None:  # the file the simulator reads to decide
            self._check_turn |= file_turn(compared[0], self._check_command(file_command(compared[0]))[1])
        return code == 0

    def _check_command(self, command: str) -> tuple[int, str]:
        """(exit code, output) of a command run beside the episode's shell, in /work, as the check runs."""
        try:
            result = self.container.exec_run(
                ["timeout", str(CHECK_TIMEOUT_S), "bash", "-c", command], user="1000:1000", workdir="/work"
            )
        except docker.errors.DockerException as exc:
            raise InfraError(f"could not run the success check: {exc}") from exc
        return result.exit_code, (result.output or b"").decode(errors="replace")
