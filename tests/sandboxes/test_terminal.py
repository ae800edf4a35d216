"""The Docker terminal against the real daemon and the real sandbox image."""

import json
import os

import pytest

from trajforge.sandboxes.base import ResourceLimitExceeded, ShellCheck, Task
from trajforge.sandboxes.containers import RUN_LABEL, Limits, reap_stale, remove_owned, start_container
from trajforge.sandboxes.terminal import DockerTerminal
from trajforge.schemas.check_turn import recorded_check_turns
from trajforge.schemas.records import Action

TASK = Task(id="t", instruction="play", files={"notes/todo.txt": "buy milk\nfix bug\n"}, setup=("git init -q repo",))


def sh(env, command: str):
    return env.step(Action(kind="shell", content=command))


def keys(env, text: str, duration: float = 0.3):
    return env.step(Action(kind="keystrokes", content=json.dumps({"keystrokes": text, "duration": duration})))


def test_state_persists_across_turns(terminal):
    first = terminal.reset(TASK)
    assert "notes" in first.content and "repo" in first.content
    sh(terminal, "cd notes && export COUNT=$(wc -l < todo.txt); sleep 60 &")
    observation = sh(terminal, "echo $COUNT; pwd; jobs | wc -l")
    assert observation.content == "2\n/work/notes\n1\n"
    assert json.loads(observation.metadata)["cwd"] == "/work/notes"
    failing = sh(terminal, "cat missing.txt")
    assert failing.exit_code == 1 and failing.is_error and "No such file" in failing.content


def test_keystrokes_drive_an_interactive_program(terminal):
    terminal.reset(TASK)
    keys(terminal, "python3\n", 1.0)
    screen = keys(terminal, "print(6 * 7)\n", 0.5).content
    assert "42" in screen.splitlines()
    keys(terminal, "C-d")
    keys(terminal, "sleep 100\n")
    after = keys(terminal, "C-c", 0.3).content
    assert after.rstrip().endswith("$") or "^C" in after
    bad = terminal.step(Action(kind="keystrokes", content="not json"))
    assert bad.is_error and "JSON" in bad.content


def test_timeout_and_truncation(terminal):
    terminal.reset(TASK)
    slow = sh(terminal, "sleep 20")
    assert slow.exit_code is None and "interrupted" in slow.content
    assert json.loads(slow.metadata)["timed_out"]
    big = sh(terminal, "seq 1 200000")
    assert big.truncated and "bytes truncated" in big.content
    assert sh(terminal, "echo fine").content == "fine\n"


def test_isolation_defaults(terminal):
    terminal.reset(TASK)
    assert sh(terminal, "id -u; id -un").content == "1000\nagent\n"
    assert sh(terminal, "ls /sys/class/net").content.split() == ["lo"]
    assert sh(terminal, "tail -n +2 /proc/net/route | wc -l").content.strip() == "0"
    assert "0000000000000000" in sh(terminal, "grep CapEff /proc/self/status").content
    assert sh(terminal, "grep NoNewPrivs /proc/self/status").content.split()[-1] == "1"
    assert sh(terminal, "touch /etc/x").exit_code != 0  # read-only root
    no_dns = sh(terminal, "python3 -c \"import socket; socket.getaddrinfo('example.com', 80)\"")
    assert no_dns.exit_code != 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("attack", "kind"),
    [
        (":(){ :|:& };:", "processes"),
        ("python3 -c 'b = bytearray(2 * 1024 ** 3)'", "memory"),
        ("dd if=/dev/zero of=/work/fill bs=1M count=500", "disk"),
    ],
)
def test_resource_attacks_are_contained(docker_client, sandbox_image, attack, kind):
    env = DockerTerminal(
        image=sandbox_image,
        run_id="pytest",
        limits=Limits(pids=128, memory="256m", workspace="32m"),
        command_timeout=15,  # a fork bomb on a loaded machine (CI beside training) needs more than 5 s to fill 128
        client=docker_client,
    )
    env.reset(TASK)
    with pytest.raises(ResourceLimitExceeded, match=f"resource limit: {kind}") as ended:
        for _ in range(4):
            sh(env, attack)
            attack = "ls /work"
    assert ended.value.status == "agent_error"
    env.close()
    # The next episode starts clean and works; the host was never touched.
    with DockerTerminal(image=sandbox_image, run_id="pytest", client=docker_client) as fresh:
        fresh.reset(TASK)
        assert sh(fresh, "echo ok; ls /work").content == "ok\nnotes\nrepo\n"


def test_a_terminal_may_offer_only_the_shell(docker_client, sandbox_image):
    with pytest.raises(ValueError, match=r"terminal tools \['mouse'\]: expected some of shell, keystrokes"):
        DockerTerminal(image=sandbox_image, tools=("mouse",), client=docker_client)
    with DockerTerminal(image=sandbox_image, run_id="pytest", client=docker_client, tools=("shell",)) as env:
        env.reset(TASK)
        assert [tool["name"] for tool in env.action_space()] == ["shell"]
        refused = keys(env, "ls\n")
        assert refused.is_error and refused.content == "unsupported action kind 'keystrokes': use shell"
        assert sh(env, "echo ok").content == "ok\n"


def test_success_check(terminal):
    task = Task(id="c", instruction="make a file", check=ShellCheck(command="test -f /work/done"))
    terminal.reset(task)
    assert terminal.check(task) is False
    [(action, observation)] = recorded_check_turns({"outcome": {"verifier": json.dumps(terminal.check_details())}})
    assert observation == "exit code: 1\n"
    assert sh(terminal, action["content"]).content == observation  # what the shell shows for the recorded action
    sh(terminal, "touch done")
    assert terminal.check(task) is True
    assert terminal.check_details()["check_turn"]["observation"] == "exit code: 0\n"
    assert terminal.check(Task(id="n", instruction="no check")) is None


def test_a_file_comparison_records_the_file_after_its_check(terminal):
    """The file the simulator reads to decide such a check, as the real shell showed it then."""
    task = Task(id="c", instruction="count", check=ShellCheck(command='test "$(cat out/n.txt)" = 5'))
    terminal.reset(task)
    assert terminal.check(task) is False
    turns = recorded_check_turns({"outcome": {"verifier": json.dumps(terminal.check_details())}})
    assert [action["content"] for action, _ in turns][1:] == ["cat out/n.txt"]
    assert turns[1][1] == "cat: out/n.txt: No such file or directory\n"
    sh(terminal, "mkdir out && printf '4\\n' > out/n.txt")
    assert terminal.check(task) is False
    file_read = terminal.check_details()["file_turn"]
    assert file_read["observation"] == "4\n" == sh(terminal, file_read["action"]["content"]).content


def test_stale_containers_are_reaped(docker_client, sandbox_image):
    dead_pid = 2**22 + 12345  # above pid_max: no process has it
    orphan = start_container(docker_client, sandbox_image, "crashed-run", Limits(), owner=dead_pid)
    assert reap_stale(docker_client) >= 1
    labelled = docker_client.containers.list(all=True, filters={"label": RUN_LABEL})
    assert orphan.id not in {c.id for c in labelled}


def test_a_process_removes_the_containers_it_left_and_no_one_elses(docker_client, sandbox_image):
    live = os.getppid()  # alive, and not this process: the session's own containers are not touched
    left = start_container(docker_client, sandbox_image, "left-open", Limits(), owner=live)
    other = start_container(docker_client, sandbox_image, "still-running", Limits(), owner=1)
    try:
        reap_stale(docker_client)
        assert left.id in _ids(docker_client)  # its owner lives: not stale
        assert remove_owned(docker_client, live) == 1
        assert left.id not in _ids(docker_client) and other.id in _ids(docker_client)
    finally:
        other.remove(force=True)


def _ids(client) -> set[str]:
    return {c.id for c in client.containers.list(all=True, filters={"label": RUN_LABEL})}
