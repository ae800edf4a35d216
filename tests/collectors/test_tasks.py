import json

import pytest

from trajforge.collectors.tasks import SuiteError, load_suite, task_split
from trajforge.schemas.splits import SplitConfig, task_identity


def test_bundled_suites_load():
    terminal, swe = load_suite("terminal"), load_suite("swe")
    assert len(terminal.tasks) >= 30
    assert {a.kind for t in terminal.tasks for a in t.actions} == {"shell", "keystrokes"}
    assert len(swe.tasks) >= 3 and all(t.check and t.setup for t in swe.tasks)
    keys = next(t for t in terminal.tasks if t.id == "python-repl").actions[0]
    assert json.loads(keys.content) == {"keystrokes": "python3\n", "duration": 1.0}


def test_bad_suites_say_where(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "suite: s\ndomain: terminal\ntasks:\n  - id: a\n    instructions: typo\n  - id: a\n    instruction: ok\n"
    )
    with pytest.raises(SuiteError) as error:
        load_suite(str(path))
    message = str(error.value)
    assert "tasks[0].instruction: Field required" in message
    assert "tasks[0].instructions: Extra inputs are not permitted" in message


def test_duplicate_ids_and_unknown_domain(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("suite: s\ndomain: moon\ntasks:\n  - {id: a, instruction: x}\n  - {id: a, instruction: y}\n")
    with pytest.raises(SuiteError, match="duplicate id 'a'") as error:
        load_suite(str(path))
    assert "domain: 'moon' is not one of" in str(error.value)


def test_unknown_suite_and_broken_yaml(tmp_path):
    with pytest.raises(SuiteError, match="bundled suites: .*swe.*terminal"):
        load_suite("nope")
    path = tmp_path / "broken.yaml"
    path.write_text("suite: [unclosed\n")
    with pytest.raises(SuiteError, match="not valid YAML"):
        load_suite(str(path))


def test_a_check_or_setup_the_environment_cannot_run_is_refused_at_load(tmp_path):
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "suite: s\ndomain: mcp\nenvironment: {kind: mcp, server: kvstore}\ntasks:\n"
        "  - {id: a, instruction: x, check: test -f /work/done}\n"
        "  - {id: b, instruction: y, setup: [rm -rf /work]}\n"
        "  - {id: c, instruction: z, check: {tool: get, arguments: {key: k}, contains: v}}\n"
    )
    with pytest.raises(SuiteError) as error:
        load_suite(str(path))
    assert str(error.value).splitlines() == [
        f"{path}: tasks[0].check: a mcp environment cannot run ShellCheck(command='test -f /work/done')",
        f"{path}: tasks[1].setup: a mcp environment cannot run ('rm -rf /work',)",
    ]


def test_checks_are_typed_by_what_decides_success():
    from trajforge.sandboxes.base import PageCheck, ShellCheck, ToolCheck

    swe = load_suite("swe").tasks[0]
    assert swe.check == ShellCheck(command="python3 -m pytest -q -p no:cacheprovider")
    assert all(isinstance(t.check, ToolCheck | None) for t in load_suite("mcp-kvstore").tasks)
    assert all(isinstance(t.check, PageCheck) for t in load_suite("web-wiki").tasks)


def test_generated_entries_are_checked_each_naming_where_it_is(tmp_path):
    path = tmp_path / "gen.yaml"
    path.write_text(
        "suite: s\ndomain: mcp\nenvironment: {kind: mcp, server: kvstore}\ngenerated:\n"
        "  - {family: kvstore, count: 2, max_keys: 1}\n"
        "  - {family: terminal-text, count: 2}\n"
        "  - {family: workspace, count: 2}\n"
        "  - {family: nope, count: 2}\n"
        "  - {family: kvstore, count: 0}\n"
    )
    with pytest.raises(SuiteError) as error:
        load_suite(str(path))
    assert str(error.value).splitlines() == [
        f"{path}: generated[4].count: Input should be greater than or equal to 1",
    ]
    path.write_text(path.read_text().replace("count: 0", "count: 1"))
    with pytest.raises(SuiteError) as error:
        load_suite(str(path))
    assert str(error.value).splitlines() == [
        f"{path}: generated[0].max_keys: Input should be greater than or equal to 2",
        f"{path}: generated[1]: family 'terminal-text' runs in a terminal environment, not in a mcp environment "
        "with the kvstore server",
        f"{path}: generated[2]: family 'workspace' runs in a mcp environment with the workspace server, not in a mcp "
        "environment with the kvstore server",
        f"{path}: generated[3].family: unknown task family 'nope'; known: kvstore, terminal-files, terminal-text, "
        "workspace",
    ]


def test_a_suite_may_mix_written_and_generated_tasks_but_needs_one_or_the_other(tmp_path):
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "suite: s\ndomain: terminal\ntasks:\n  - {id: a, instruction: x}\n"
        "generated:\n  - {family: terminal-text, count: 3, seed: 1}\n"
    )
    tasks = load_suite(str(path)).tasks
    assert [t.family for t in tasks] == [None] + ["terminal-text"] * 3
    path.write_text("suite: s\ndomain: terminal\n")
    with pytest.raises(SuiteError, match="a suite needs tasks, generated tasks or both"):
        load_suite(str(path))


def test_the_same_task_in_two_suites_lands_on_one_side_of_the_split(tmp_path):
    """The split key is the task (its instruction and starting files), not the suite that holds it; on a key that
    hashed the suite's name, about a third of these 60 tasks would be drawn to another side in the second suite."""
    written = "".join(
        f"  - {{id: t{i}, instruction: 'print the line count of f{i}.txt', files: {{f{i}.txt: 'a{i}'}}}}\n"
        for i in range(60)
    )
    generated = "generated:\n  - {family: terminal-text, count: 60, seed: 3}\n"
    suites = []
    for name in ("first", "second-copy"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"suite: {name}\ndomain: terminal\ntasks:\n{written}{generated}")
        suites.append(load_suite(str(path)))
    config = SplitConfig(held_out=0.2, validation=0.2)
    first, second = ([task_split(s, t, config) for t in s.tasks] for s in suites)
    assert first == second and set(first) == {"train", "validation", "held_out"}


def test_an_episode_records_its_task_s_identity_so_build_corpus_splits_it_as_the_suite_does():
    from tests.collectors.fakes import FakeEnvironment
    from trajforge.collectors.episode import run_episode
    from trajforge.collectors.policies.scripted import ScriptedPolicy
    from trajforge.sandboxes.base import Task
    from trajforge.schemas.splits import split_of, task_key

    suite = load_suite("terminal")
    config = SplitConfig(held_out=0.3, validation=0.3)
    for task in suite.tasks[:12]:
        plain = Task(id=task.id, instruction=task.instruction, files=task.files)
        record = run_episode(FakeEnvironment(), ScriptedPolicy(), plain, f"another-suite/{task.id}#0", "run", 0)
        assert task_key(record.model_dump()) == task_identity(task.instruction, task.files)
        assert split_of(record.model_dump(), config) == task_split(suite, task, config)
