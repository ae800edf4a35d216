from tests.collectors.families.runs import first_tasks, unsolved
from trajforge.collectors.tasks import load_suite


def test_every_operation_is_drawn():
    tasks = load_suite("mcp-workspace-gen").tasks
    tools = {a.name for t in tasks for a in t.actions}
    assert {"query_database", "add_row", "update_row", "create_page", "append_blocks"} <= tools
    assert any('"cursor": "cur_' in a.content for t in tasks for a in t.actions)  # queries that page


def test_scripted_solutions_pass_their_checks_on_the_real_server(docker_client, sandbox_image):
    assert unsolved(first_tasks("mcp-workspace-gen", 4), docker_client, sandbox_image) == []
