import pytest

from trajforge.collectors.collection import collect
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.tasks import SuiteError, load_suite

# A deliberately broken family parameter: answers go to /etc, on the sandbox's read-only root.
BROKEN = """
suite: broken
domain: terminal
generated:
  - {family: terminal-text, count: 2, seed: 3, answer_dirs: [/etc]}
"""


def test_a_suite_whose_generated_tasks_fail_their_own_check_is_named_and_not_collected(
    tmp_path, docker_client, sandbox_image
):
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    config = CollectConfig(suites=(str(path),), output=str(tmp_path / "raw"), run_id="r", verify_generated=True)
    with pytest.raises(SuiteError) as error:
        collect(config, log=lambda _: None, warn=lambda _: None)
    lines = str(error.value).splitlines()
    assert lines[0] == "2 generated task(s) fail their own scripted check, so nothing was collected:"
    for task, line in zip(load_suite(str(path)).tasks, lines[1:], strict=True):
        assert line.startswith(f"  broken/{task.id} (terminal-text): failure: its check ShellCheck(command='test ")
        assert "/etc/" in line and "Read-only file system" in line  # what the check looked at, what the action said
    assert not (tmp_path / "raw").exists()
