"""A Notion-like workspace: pages with blocks, databases with typed properties, relations between rows, and
filtered, sorted, paginated queries. Relations are checked on every write and a referenced row cannot be deleted,
so long call chains must keep their ids straight (the referential integrity the paper highlights)."""

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .paging import paginate

PROPERTY_TYPES = ("title", "text", "number", "select", "checkbox", "date", "relation")


class Workspace:
    def __init__(self):
        self.pages: dict[str, dict] = {}
        self.databases: dict[str, dict] = {}
        self.rows: dict[str, dict] = {}
        self._counters: dict[str, int] = {}

    def new_id(self, kind: str) -> str:
        self._counters[kind] = self._counters.get(kind, 0) + 1
        return f"{kind}_{self._counters[kind]:04d}"

    # pages ----------------------------------------------------------------------------------------------
    def create_page(self, title: str, parent_id: str | None = None, blocks: list[str] | None = None) -> dict:
        if not title.strip():
            raise ToolError("title must not be empty")
        if parent_id is not None and parent_id not in self.pages:
            raise ToolError(f"parent page not found: {parent_id}")
        page = {"id": self.new_id("page"), "title": title, "parent_id": parent_id, "blocks": list(blocks or [])}
        self.pages[page["id"]] = page
        return page

    def page(self, page_id: str) -> dict:
        if page_id not in self.pages:
            raise ToolError(f"page not found: {page_id}")
        return self.pages[page_id]

    # databases ------------------------------------------------------------------------------------------
    def create_database(self, title: str, parent_page_id: str, properties: dict[str, dict]) -> dict:
        self.page(parent_page_id)
        titles = [n for n, p in properties.items() if p.get("type") == "title"]
        if len(titles) != 1:
            raise ToolError("a database needs exactly one property of type 'title'")
        for name, prop in properties.items():
            kind = prop.get("type")
            if kind not in PROPERTY_TYPES:
                raise ToolError(f"property {name!r}: type must be one of {', '.join(PROPERTY_TYPES)}")
            if kind == "select" and not prop.get("options"):
                raise ToolError(f"property {name!r}: a select needs a non-empty 'options' list")
            if kind == "relation" and prop.get("database_id") not in self.databases:
                raise ToolError(f"property {name!r}: relation target database not found: {prop.get('database_id')}")
        db = {"id": self.new_id("db"), "title": title, "parent_page_id": parent_page_id, "properties": properties}
        self.databases[db["id"]] = db
        return db

    def database(self, database_id: str) -> dict:
        if database_id not in self.databases:
            raise ToolError(f"database not found: {database_id}")
        return self.databases[database_id]

    def check_values(self, db: dict, values: dict[str, Any]) -> None:
        schema = db["properties"]
        for name, value in values.items():
            if name not in schema:
                raise ToolError(f"unknown property {name!r} for database {db['id']} (has: {', '.join(schema)})")
            prop = schema[name]
            kind = prop["type"]
            ok = {
                "title": isinstance(value, str) and value.strip() != "",
                "text": isinstance(value, str),
                "number": isinstance(value, (int, float)) and not isinstance(value, bool),
                "checkbox": isinstance(value, bool),
                "date": isinstance(value, str) and len(value) == 10 and value[4] == "-" and value[7] == "-",
                "select": value in prop.get("options", []),
                "relation": isinstance(value, list) and all(isinstance(v, str) for v in value),
            }[kind]
            if not ok:
                expected = {
                    "select": f"one of {prop.get('options')}",
                    "date": "YYYY-MM-DD",
                    "relation": "a list of row ids",
                }.get(kind, kind)
                raise ToolError(f"property {name!r}: expected {expected}, got {value!r}")
            if kind == "relation":
                for row_id in value:
                    target = self.rows.get(row_id)
                    if target is None or target["database_id"] != prop["database_id"]:
                        raise ToolError(f"property {name!r}: row {row_id} not found in database {prop['database_id']}")

    def add_row(self, database_id: str, properties: dict[str, Any]) -> dict:
        db = self.database(database_id)
        title = next(n for n, p in db["properties"].items() if p["type"] == "title")
        if title not in properties:
            raise ToolError(f"property {title!r} (the title) is required")
        self.check_values(db, properties)
        row = {"id": self.new_id("row"), "database_id": database_id, "properties": dict(properties)}
        self.rows[row["id"]] = row
        return row

    def row(self, row_id: str) -> dict:
        if row_id not in self.rows:
            raise ToolError(f"row not found: {row_id}")
        return self.rows[row_id]

    def referrers(self, row_id: str) -> list[str]:
        found = []
        for other in self.rows.values():
            schema = self.databases[other["database_id"]]["properties"]
            for name, value in other["properties"].items():
                if schema[name]["type"] == "relation" and row_id in value:
                    found.append(f"{other['id']}.{name}")
        return found

    def query(self, database_id: str, filter: dict | None, sorts: list[dict] | None) -> list[dict]:
        db = self.database(database_id)
        rows = [r for r in self.rows.values() if r["database_id"] == database_id]
        if filter:
            name = filter.get("property")
            if name not in db["properties"]:
                raise ToolError(f"filter: unknown property {name!r}")
            ops = [k for k in ("equals", "contains", "greater_than", "less_than") if k in filter]
            if len(ops) != 1:
                raise ToolError("filter: give exactly one of equals, contains, greater_than, less_than")
            op, target = ops[0], filter[ops[0]]

            def keep(row: dict) -> bool:
                value = row["properties"].get(name)
                if value is None:
                    return False
                if op == "equals":
                    return value == target
                if op == "contains":
                    return str(target).lower() in str(value).lower() if not isinstance(value, list) else target in value
                try:
                    return value > target if op == "greater_than" else value < target
                except TypeError:
                    raise ToolError(f"filter: cannot compare {name!r} with {target!r}") from None

            rows = [r for r in rows if keep(r)]
        for sort in reversed(sorts or []):
            name = sort.get("property")
            if name not in db["properties"]:
                raise ToolError(f"sorts: unknown property {name!r}")
            rows.sort(
                key=lambda r: (r["properties"].get(name) is None, r["properties"].get(name) or 0),
                reverse=sort.get("direction") == "descending",
            )
        return rows


def seeded() -> Workspace:
    ws = Workspace()
    home = ws.create_page("Team home", blocks=["Welcome to the team workspace.", "Projects and tasks live below."])
    ws.create_page("Meeting notes 2026-11-02", home["id"], ["Decided: ship the importer first.", "Owner: Ana"])
    ws.create_page("Onboarding", home["id"], ["Read the design doc.", "Ask Bo for access to the cluster."])
    projects = ws.create_database(
        "Projects",
        home["id"],
        {
            "Name": {"type": "title"},
            "Status": {"type": "select", "options": ["planned", "active", "done"]},
            "Budget": {"type": "number"},
        },
    )
    tasks = ws.create_database(
        "Tasks",
        home["id"],
        {
            "Name": {"type": "title"},
            "Done": {"type": "checkbox"},
            "Due": {"type": "date"},
            "Project": {"type": "relation", "database_id": projects["id"]},
            "Estimate": {"type": "number"},
        },
    )
    importer = ws.add_row(projects["id"], {"Name": "Importer", "Status": "active", "Budget": 12000})
    report = ws.add_row(projects["id"], {"Name": "Report page", "Status": "planned", "Budget": 4000})
    ws.add_row(projects["id"], {"Name": "Legacy cleanup", "Status": "done", "Budget": 1500})
    for name, done, due, project, estimate in [
        ("Parse ATIF files", True, "2026-11-05", importer, 3),
        ("Write round-trip tests", False, "2026-11-12", importer, 2),
        ("Handle invalid UTF-8", False, "2026-11-09", importer, 1),
        ("Sketch the histogram", False, "2026-12-01", report, 2),
        ("Pick a chart library", True, "2026-11-20", report, 1),
        ("Benchmark the reader", False, "2026-11-15", importer, 5),
        ("Draft the page layout", False, "2026-12-03", report, 3),
    ]:
        ws.add_row(
            tasks["id"], {"Name": name, "Done": done, "Due": due, "Project": [project["id"]], "Estimate": estimate}
        )
    return ws


def build_server(ws: Workspace) -> MCPServer:
    mcp = MCPServer("workspace", version="1.0", log_level="WARNING")

    @mcp.tool()
    def search(query: str = "", page_size: int = 10, cursor: str | None = None) -> dict:
        """Find pages and databases whose title contains `query` (all when empty). Paginated."""
        hits = [{"object": "page", "id": p["id"], "title": p["title"]} for p in ws.pages.values()]
        hits += [{"object": "database", "id": d["id"], "title": d["title"]} for d in ws.databases.values()]
        hits = [h for h in hits if query.lower() in h["title"].lower()]
        return paginate(hits, page_size, cursor)

    @mcp.tool()
    def get_page(page_id: str) -> dict:
        """A page with its blocks and the ids of its child pages and databases."""
        page = ws.page(page_id)
        children = [p["id"] for p in ws.pages.values() if p["parent_id"] == page_id]
        databases = [d["id"] for d in ws.databases.values() if d["parent_page_id"] == page_id]
        return {**page, "child_pages": children, "child_databases": databases}

    @mcp.tool()
    def create_page(title: str, parent_id: str | None = None, blocks: list[str] | None = None) -> dict:
        """Create a page, optionally under a parent page, with text blocks."""
        return ws.create_page(title, parent_id, blocks)

    @mcp.tool()
    def append_blocks(page_id: str, blocks: list[str]) -> dict:
        """Append text blocks to a page."""
        page = ws.page(page_id)
        page["blocks"].extend(blocks)
        return page

    @mcp.tool()
    def create_database(title: str, parent_page_id: str, properties: dict[str, dict]) -> dict:
        """Create a database under a page. properties: name -> {"type": title|text|number|select|checkbox|date|relation,
        "options": [...] for select, "database_id": target for relation}."""
        return ws.create_database(title, parent_page_id, properties)

    @mcp.tool()
    def get_database(database_id: str) -> dict:
        """A database's schema and row count."""
        db = ws.database(database_id)
        return {**db, "row_count": sum(r["database_id"] == database_id for r in ws.rows.values())}

    @mcp.tool()
    def add_row(database_id: str, properties: dict[str, Any]) -> dict:
        """Add a row; values are checked against the schema, relations must point at existing rows."""
        return ws.add_row(database_id, properties)

    @mcp.tool()
    def get_row(row_id: str) -> dict:
        """One row."""
        return ws.row(row_id)

    @mcp.tool()
    def update_row(row_id: str, properties: dict[str, Any]) -> dict:
        """Change some properties of a row (checked like add_row)."""
        row = ws.row(row_id)
        ws.check_values(ws.database(row["database_id"]), properties)
        row["properties"].update(properties)
        return row

    @mcp.tool()
    def delete_row(row_id: str) -> dict:
        """Delete a row; refused while other rows relate to it."""
        ws.row(row_id)
        if refs := ws.referrers(row_id):
            raise ToolError(f"row {row_id} is referenced by {', '.join(refs)}; remove those relations first")
        del ws.rows[row_id]
        return {"deleted": row_id}

    @mcp.tool()
    def query_database(
        database_id: str,
        filter: dict | None = None,
        sorts: list[dict] | None = None,
        page_size: int = 5,
        cursor: str | None = None,
    ) -> dict:
        """Rows of a database. filter: {"property": name, one of "equals"/"contains"/"greater_than"/"less_than": value};
        sorts: [{"property": name, "direction": "ascending"|"descending"}]. Paginated by page_size and cursor."""
        return paginate(ws.query(database_id, filter, sorts), page_size, cursor)

    return mcp


if __name__ == "__main__":
    build_server(seeded()).run()
