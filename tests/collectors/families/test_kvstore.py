from tests.collectors.families.runs import first_tasks, unsolved
from trajforge.collectors.tasks import load_suite


def test_every_operation_is_drawn_and_counts_page_through_the_cursor():
    tasks = load_suite("mcp-kvstore-gen").tasks
    tools = {a.name for t in tasks for a in t.actions}
    assert tools == {"get", "set", "delete", "history", "list_keys"}
    assert any('"expected_version"' in a.content for t in tasks for a in t.actions)  # compare-and-set
    assert any('"cursor": "cur_' in a.content for t in tasks for a in t.actions)  # listing that pages
    assert all(s.name == "set" for t in tasks for s in t.setup)  # each task writes its own keys first


def test_scripted_solutions_pass_their_checks_on_the_real_server(docker_client, sandbox_image):
    assert unsolved(first_tasks("mcp-kvstore-gen", 4), docker_client, sandbox_image) == []
