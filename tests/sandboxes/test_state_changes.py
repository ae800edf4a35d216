"""Whether an action could have changed the state: read-only only when every command is on the read-only list and
nothing redirects or substitutes; anything in doubt could change it."""

from trajforge.sandboxes.state_changes import could_change_state


def shell(content: str) -> dict:
    return {"kind": "shell", "content": content}


def test_looking_and_printing_change_nothing():
    for content in ('echo "exit code: 0"', "cat out/sum.txt", "ls -la && wc -l notes.txt | head -3",
                    "cd out; pwd", "grep -c milk notes.txt || true", "", "printf '%s\\n' done"):  # fmt: skip
        assert not could_change_state(shell(content)), content


def test_anything_that_may_write_could_change_the_state():
    for content in ("echo 5 > answer.txt", "wc -l < notes.txt >> a", "touch a", "ls; rm -rf out",
                    "cat notes.txt | tee copy.txt", "echo $(rm a)", "echo `rm a`", "sort -o a a", "ls\nrm a",
                    "X=1 ls", "( ls ) && python3 -c 'open(\"a\", \"w\")'", "echo 'unbalanced", "ls | sh",
                    "find . -delete", "uniq in out"):  # fmt: skip
        assert could_change_state(shell(content)), content
    assert could_change_state({"kind": "tool_call", "name": "get", "content": "{}"})
    assert could_change_state({"kind": "browser", "name": "goto", "content": "{}"})
