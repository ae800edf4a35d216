"""A persistent bash session driven over a pipe: one process for the whole episode.

Every command runs in the same shell (`eval` in the shell itself), so cwd, variables, functions, background
jobs and files carry across turns, and an action costs a pipe round trip instead of a `docker exec`.
Each command is followed by a marker line that carries its exit code and the shell's cwd; the marker is made
of builtins only, so it prints even when the sandbox can no longer fork.
"""

import os
import secrets
import select
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_MAX_OUTPUT = 64 * 1024
INTERRUPT_GRACE_S = 2.0
BEGIN_GRACE_S = 5.0  # how much longer than its timeout a command may take to begin before it is interrupted

# Background jobs of a non-interactive shell ignore SIGINT, and the shell's own handler (not SIG_IGN, which
# children would inherit) keeps the shell alive: SIGINT to the process group stops just the foreground command.
BOOT = "exec 2>&1; trap ':' INT; unset PROMPT_COMMAND; PS1=''; PS2=''\n"


class ShellDied(RuntimeError):
    def __init__(self, message: str, output: str = ""):
        super().__init__(message)
        self.output = output


@dataclass
class ShellResult:
    output: str
    exit_code: int | None  # None when the command was interrupted
    cwd: str
    probe: str = ""  # what the probe snippet measured after the command (see PersistentShell)
    timed_out: bool = False
    truncated: bool = False
    seconds: float = 0.0


def ansi_c_quote(text: str) -> str:
    """Quote any text as a bash $'...' word, so a command needs no fork (no base64, no temp file) to arrive."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == "\n":
            out.append("\\n")
        elif code < 32 or code == 127:
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


class _Capture:
    """Output up to a limit; past it, the head and a rolling tail, so memory stays bounded."""

    def __init__(self, limit: int, keep: int):
        self.limit, self.keep = limit, keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        if len(self.head) < self.limit:
            room = self.limit - len(self.head)
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.keep)]

    def result(self) -> tuple[bytes, bool]:
        if self.total <= self.limit:
            return bytes(self.head), False
        half = self.limit // 2
        tail = bytes(self.head[half:] + self.tail)[-half:]
        dropped = self.total - half - len(tail)
        return bytes(self.head[:half]) + f"\n[... {dropped:,} bytes truncated ...]\n".encode() + tail, True


class PersistentShell:
    """Drive `argv` (a bash, e.g. through `docker exec -i`) one command at a time.

    `probe` is bash made of builtins only that sets `__tf_probe` after each command (resource counters read
    from cgroup files, say); its value comes back in ShellResult.probe at no extra round trip.
    """

    def __init__(
        self,
        argv: list[str],
        signal_group: Callable[[int, int], None],
        max_output: int = DEFAULT_MAX_OUTPUT,
        boot_timeout: float = 20.0,
        probe: str = "",
    ):
        self.signal_group = signal_group  # (pgid, signal) -> None, sends a signal inside the sandbox
        self.max_output = max_output
        self.probe = probe
        self._token = secrets.token_hex(6)
        self._seq = 0
        self._pending = bytearray()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._send(BOOT)
        booted = self.run("printf %s $$", timeout=boot_timeout)
        if booted.exit_code != 0 or not booted.output.isdigit():
            raise ShellDied(f"the shell did not start: {booted.output[:500]!r}")
        self.pgid = int(booted.output)

    def _send(self, text: str) -> None:
        try:
            self.proc.stdin.write(text.encode("utf-8", "surrogateescape"))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ShellDied("the shell is gone") from exc

    def run(self, command: str, timeout: float = 10.0) -> ShellResult:
        self._seq += 1
        marker = f"__TF_{self._token}_{self._seq}__".encode()
        begun = f"__TF_{self._token}_{self._seq}_begun__".encode()
        started = time.monotonic()
        self._send(
            f"printf '\\n{begun.decode()}\\n'; "
            f"{{ eval {ansi_c_quote(command)}\n}} </dev/null; __tf_rc=$?; __tf_probe=; {self.probe or ':'}\n"
            f'printf \'\\n{marker.decode()}%s:%s:%s\\n\' "$__tf_rc" "$__tf_probe" "$PWD"\n'
        )
        capture = _Capture(self.max_output, self.max_output // 2 + len(marker) + 4096)
        timed_out = False
        deadline = started + timeout + BEGIN_GRACE_S
        # The shell says when the command begins, and the timeout counts from there: on a busy machine the shell
        # can take a while to read it, and an interrupt that lands before the command exists interrupts nothing.
        # A second SIGINT before the kill all the same, as a SIGKILL to the group takes its background jobs too.
        escalation = [signal.SIGINT, signal.SIGINT, signal.SIGKILL]
        awaited = [begun, marker]
        while True:
            line = self._read_until(awaited[0], capture, deadline)
            if line is not None:
                if awaited.pop(0) == marker:
                    break
                if not timed_out:  # it has begun: its own timeout from now
                    deadline = time.monotonic() + timeout
                continue
            if not escalation:
                raise ShellDied(f"no answer {timeout:.0f}s after the command and its interrupts", self._text(capture))
            timed_out = True
            self.signal_group(self.pgid, escalation.pop(0))
            deadline = time.monotonic() + INTERRUPT_GRACE_S
        status, probe, cwd = line.split(":", 2)
        output, truncated = capture.result()
        text = output.decode("utf-8", "replace")
        if timed_out:
            text += f"\n[interrupted: the command ran past its {timeout:g}s timeout]"
        return ShellResult(
            output=text,
            exit_code=None if timed_out else int(status),
            cwd=cwd,
            probe=probe,
            timed_out=timed_out,
            truncated=truncated,
            seconds=time.monotonic() - started,
        )

    @staticmethod
    def _text(capture: _Capture) -> str:
        return capture.result()[0].decode("utf-8", "replace")

    def _read_until(self, marker: bytes, capture: _Capture, deadline: float) -> str | None:
        """Feed output into `capture` until the marker line; the rest of that line, or None at the deadline."""
        fd = self.proc.stdout.fileno()
        buffer = self._pending
        while True:
            index = buffer.find(b"\n" + marker)
            if index >= 0:
                end = buffer.find(b"\n", index + 1 + len(marker))
                if end >= 0:
                    capture.add(bytes(buffer[:index]))
                    rest = bytes(buffer[index + 1 + len(marker) : end]).decode()
                    self._pending = bytearray(buffer[end + 1 :])
                    return rest
            else:
                # Everything but a possible partial "\n<marker>" at the end is output.
                safe = max(0, len(buffer) - len(marker))
                capture.add(bytes(buffer[:safe]))
                del buffer[:safe]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._pending = buffer
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                capture.add(bytes(buffer))
                raise ShellDied(f"the shell exited (code {self.proc.poll()})", self._text(capture))
            buffer += chunk

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
