"""PersistentShell against a local bash: the protocol, without Docker."""

import contextlib
import os
import signal
from pathlib import Path

import pytest

from trajforge.sandboxes.shell import PersistentShell, ShellDied, ansi_c_quote

# SIGINT back to its default first: a suite started in the background by a non-interactive shell (as CI may start
# it) runs with SIGINT ignored, and bash can neither trap nor undo a signal ignored on entry. A shell that
# `docker exec` starts in a sandbox never inherits it.
BASH = ["env", "--default-signal=INT", "setsid", "-w", "bash", "--noprofile", "--norc"]


def signal_group(pgid: int, sig: int) -> None:
    """What the Docker terminal does inside its container: SIGINT to the group, SIGKILL to all but the shell."""
    if sig == signal.SIGINT:
        os.killpg(pgid, sig)
        return
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            pid, group = int(stat.parent.name), int(stat.read_text().rsplit(")", 1)[1].split()[2])
            if group == pgid and pid != pgid:
                os.kill(pid, sig)


@pytest.fixture
def shell(tmp_path):
    sh = PersistentShell(BASH, signal_group, max_output=2000)
    sh.run(f"cd {tmp_path}")
    yield sh
    with contextlib.suppress(ShellDied):
        sh.run("kill $(jobs -p) 2>/dev/null; true")
    sh.close()


def test_state_carries_across_commands(shell, tmp_path):
    shell.run("mkdir sub && cd sub && export GREETING=hi && f() { echo called $1; }")
    result = shell.run("echo $GREETING; f x; pwd")
    assert result.output == f"hi\ncalled x\n{tmp_path}/sub\n"
    assert result.cwd == f"{tmp_path}/sub"
    assert result.exit_code == 0


def test_exit_codes_and_stderr(shell):
    result = shell.run("echo out; echo err >&2; exit_code() { return 3; }; exit_code")
    assert result.output == "out\nerr\n"
    assert result.exit_code == 3


@pytest.mark.parametrize(
    "text", ["it's", 'a "quoted" $HOME `x` \\n', "tab\there", "multi\nline", "ünïcødé ✓", "\x01\x7f"]
)
def test_any_text_arrives_verbatim(shell, text):
    assert shell.run(f"printf %s {ansi_c_quote(text)}").output == text


def test_commands_cannot_read_the_control_stream(shell):
    result = shell.run("cat; echo after")
    assert result.output == "after\n"
    assert shell.run("echo still alive").output == "still alive\n"


def test_output_without_trailing_newline(shell):
    assert shell.run("printf abc").output == "abc"


def test_long_output_is_truncated_and_flagged(shell):
    result = shell.run("seq 1 20000")
    assert result.truncated
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.rstrip().endswith("20000")
    assert "bytes truncated" in result.output
    assert len(result.output) < 2100
    assert shell.run("echo next").output == "next\n"


def test_timeout_interrupts_only_the_foreground_command(shell):
    shell.run("sleep 60 & echo $! > bg.pid")
    result = shell.run("sleep 30", timeout=0.5)
    assert result.timed_out and result.exit_code is None
    assert "interrupted" in result.output
    assert shell.run("kill -0 $(cat bg.pid) && echo background alive").output == "background alive\n"


def test_the_timeout_counts_from_when_the_command_begins(shell):
    shell._send("sleep 1\n")  # the shell is busy for a second before it reads the next command
    result = shell.run("sleep 0.3; echo done", timeout=0.8)
    assert not result.timed_out and result.output == "done\n" and result.seconds > 1


def test_a_command_that_ignores_sigint_is_killed(shell):
    result = shell.run("trap '' INT; sleep 30", timeout=0.3)
    assert result.timed_out
    assert shell.run("echo ok").output == "ok\n"


def test_exit_ends_the_shell(shell):
    with pytest.raises(ShellDied, match="exited"):
        shell.run("exit 4")


def test_probe_reports_after_each_command():
    sh = PersistentShell(BASH, signal_group, probe='__tf_probe="n=$__n"')
    assert sh.run("__n=7").probe == "n=7"
    sh.close()
