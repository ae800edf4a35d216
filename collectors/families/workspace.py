"""`workspace`: the Notion-like workspace (sandboxes/servers/workspace.py): add related rows, update rows, write
pages, and count a project's tasks by querying page after page. Each task's setup adds a fresh project (and its
tasks) beside the seeded ones, so the ids a solution uses are found by a query or given in the instruction."""

import random
from collections.abc import Callable
from typing import Literal

from pydantic import Field

from trajforge.collectors.families import FAMILIES
from trajforge.collectors.families.base import Draft, Family, FamilyParams
from trajforge.collectors.families.tool_calls import call, paged_calls, shown
from trajforge.collectors.families.words import WORDS
from trajforge.sandboxes.base import ToolCheck

# The seeded workspace: Team home is page_0001 (3 pages in all); Projects db_0001 and Tasks db_0002 hold rows
# row_0001..row_0010, so the first row a task's setup adds is row_0011.
HOME, PROJECTS, TASKS_DB, FIRST_NEW_ROW, FIRST_NEW_PAGE = "page_0001", "db_0001", "db_0002", 11, 4
VERBS = ("Write", "Review", "Test", "Fix", "Draft", "Plan", "Measure", "Document", "Refactor", "Ship")
Operation = Literal["add-task", "complete-task", "set-budget", "note-page", "count-tasks"]


class WorkspaceParams(FamilyParams):
    operations: tuple[Operation, ...] = Operation.__args__
    max_tasks: int = Field(default=8, ge=1, le=30)  # tasks the new project starts with, at most


def _row(offset: int) -> str:
    return f"row_{FIRST_NEW_ROW + offset:04d}"


def _date(rng: random.Random) -> str:
    return f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


@FAMILIES.register(help="the workspace MCP server: related rows, row updates, pages, paged queries")
class WorkspaceFamily(Family):
    name = "workspace"
    kind = "mcp"
    server = "workspace"
    Params = WorkspaceParams

    def draft(self, rng: random.Random) -> Draft:
        project = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)}"
        names = [f"{rng.choice(VERBS)} the {word}" for word in rng.sample(WORDS, self.params.max_tasks + 1)]
        tasks = names[: rng.randint(1, self.params.max_tasks)]  # the last name is never a task yet
        setup = (call("add_row", database_id=PROJECTS, properties={"Name": project, "Status": "active",
                                                                   "Budget": rng.randint(1, 90) * 500}),)  # fmt: skip
        setup += tuple(
            call("add_row", database_id=TASKS_DB, properties={"Name": n, "Done": False, "Project": [_row(0)]})
            for n in tasks
        )
        instruction, actions, check = OPERATIONS[rng.choice(self.params.operations)](rng, project, tasks, names)
        return Draft(instruction=instruction, actions=tuple(actions), check=check, setup=setup, vocabulary=(project,))


def _find_project(project: str):
    return call("query_database", database_id=PROJECTS, filter={"property": "Name", "equals": project})


def _add_task(rng, project, tasks, names):
    name, due, estimate = names[-1], _date(rng), rng.randint(1, 8)
    properties = {"Name": name, "Done": False, "Due": due, "Project": [_row(0)], "Estimate": estimate}
    actions = [call("search", query="Projects")] * rng.randint(0, 1) + [_find_project(project)]
    actions.append(call("add_row", database_id=TASKS_DB, properties=properties))
    by_name = {"database_id": TASKS_DB, "filter": {"property": "Name", "equals": name}}
    check = ToolCheck(tool="query_database", arguments=by_name, contains=f'"{_row(0)}"')  # the task, in the project
    return f'Add a task "{name}" due {due}, estimate {estimate}, to the {project} project.', actions, check


def _complete_task(rng, project, tasks, names):
    index = rng.randrange(len(tasks))
    row = _row(1 + index)
    query = call("query_database", database_id=TASKS_DB, filter={"property": "Name", "equals": tasks[index]})
    actions = [query, call("update_row", row_id=row, properties={"Done": True})]
    check = ToolCheck(tool="get_row", arguments={"row_id": row}, contains=shown("Done", True))
    return f'Mark the task "{tasks[index]}" of the {project} project as done.', actions, check


def _set_budget(rng, project, tasks, names):
    budget = rng.randint(91, 400) * 250
    actions = [_find_project(project), call("update_row", row_id=_row(0), properties={"Budget": budget})]
    check = ToolCheck(tool="get_row", arguments={"row_id": _row(0)}, contains=shown("Budget", budget))
    return f"Set the budget of the {project} project to {budget}.", actions, check


def _note_page(rng, project, tasks, names):
    title = f"{project} notes {_date(rng)}"
    notes = [f"{verb} {rng.choice(WORDS)}" for verb in rng.sample(VERBS, rng.randint(1, 3))]
    page = f"page_{FIRST_NEW_PAGE:04d}"
    actions = [call("search", query="home")] * rng.randint(0, 1)
    actions += [call("create_page", title=title, parent_id=HOME, blocks=notes), call("get_page", page_id=page)]
    check = ToolCheck(tool="get_page", arguments={"page_id": page}, contains=shown("title", title))
    quoted = ", ".join(f'"{n}"' for n in notes)
    return f'Create a page "{title}" under Team home with the notes {quoted}.', actions, check


def _count_tasks(rng, project, tasks, names):
    size = rng.randint(1, 3)
    where = {"property": "Project", "contains": _row(0)}
    queries = paged_calls("query_database", len(tasks), {"page_size": size}, database_id=TASKS_DB, filter=where)
    note = f"{project} tasks: {len(tasks)}"
    actions = [_find_project(project), *queries, call("append_blocks", page_id=HOME, blocks=[note])]
    check = ToolCheck(tool="get_page", arguments={"page_id": HOME}, contains=f'"{note}"')
    instruction = (
        f"Count the tasks of the {project} project, querying {size} at a time and following the cursor, and add "
        f'the note "{project} tasks: N" (N the count) to the Team home page.'
    )
    return instruction, actions, check


OPERATIONS: dict[str, Callable] = {
    "add-task": _add_task,
    "complete-task": _complete_task,
    "set-budget": _set_budget,
    "note-page": _note_page,
    "count-tasks": _count_tasks,
}
