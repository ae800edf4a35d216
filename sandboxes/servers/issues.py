"""An issue tracker: issues with labels, assignees, comments and state, listed with filters and pages."""

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

USERS = ("alice", "bob", "carol")
LABELS = ("bug", "feature", "docs", "good first issue", "wontfix")


class Tracker:
    def __init__(self):
        self.issues: dict[int, dict] = {}

    def create(self, title: str, body: str = "", labels: list[str] | None = None, assignee: str | None = None) -> dict:
        if not title.strip():
            raise ToolError("title must not be empty")
        self._labels(labels or [])
        self._user(assignee)
        number = len(self.issues) + 1
        issue = {
            "number": number,
            "title": title,
            "body": body,
            "state": "open",
            "labels": sorted(set(labels or [])),
            "assignee": assignee,
            "comments": [],
            "state_reason": None,
        }
        self.issues[number] = issue
        return issue

    def get(self, number: int) -> dict:
        if number not in self.issues:
            raise ToolError(f"issue #{number} not found")
        return self.issues[number]

    @staticmethod
    def _labels(labels: list[str]) -> None:
        unknown = [label for label in labels if label not in LABELS]
        if unknown:
            raise ToolError(f"unknown labels {unknown}; available: {', '.join(LABELS)}")

    @staticmethod
    def _user(user: str | None) -> None:
        if user is not None and user not in USERS:
            raise ToolError(f"unknown user {user!r}; users: {', '.join(USERS)}")


def seeded() -> Tracker:
    tracker = Tracker()
    for title, labels, assignee in [
        ("Crash when the manifest is missing", ["bug"], "alice"),
        ("Support gzip segments", ["feature"], None),
        ("Document the exit codes", ["docs", "good first issue"], None),
        ("Progress bar flickers on narrow terminals", ["bug"], "bob"),
        ("Add a --json flag to inspect", ["feature"], "carol"),
        ("Typo in README", ["docs", "good first issue"], None),
        ("Rejections file grows without bound", ["bug"], None),
    ]:
        tracker.create(title, f"Reported while testing: {title.lower()}.", labels, assignee)
    tracker.issues[6]["state"] = "closed"
    tracker.issues[6]["state_reason"] = "completed"
    return tracker


def summary(issue: dict) -> dict:
    return {k: issue[k] for k in ("number", "title", "state", "labels", "assignee")} | {
        "comments": len(issue["comments"])
    }


def build_server(tracker: Tracker) -> MCPServer:
    mcp = MCPServer("issues", version="1.0", log_level="WARNING")

    @mcp.tool()
    def list_issues(
        state: str = "open", label: str | None = None, assignee: str | None = None, page: int = 1, per_page: int = 5
    ) -> dict:
        """Issues filtered by state (open, closed, all), label and assignee; page numbers start at 1."""
        if state not in ("open", "closed", "all"):
            raise ToolError("state must be open, closed or all")
        if not 1 <= per_page <= 50 or page < 1:
            raise ToolError("page must be >= 1 and per_page between 1 and 50")
        found = [i for i in tracker.issues.values() if state == "all" or i["state"] == state]
        found = [
            i
            for i in found
            if (label is None or label in i["labels"]) and (assignee is None or i["assignee"] == assignee)
        ]
        total_pages = max(1, -(-len(found) // per_page))
        if page > total_pages:
            raise ToolError(f"page {page} is past the last page ({total_pages})")
        chunk = found[(page - 1) * per_page : page * per_page]
        return {"issues": [summary(i) for i in chunk], "page": page, "total_pages": total_pages, "total": len(found)}

    @mcp.tool()
    def get_issue(number: int) -> dict:
        """One issue with its body and comments."""
        return tracker.get(number)

    @mcp.tool()
    def create_issue(title: str, body: str = "", labels: list[str] | None = None, assignee: str | None = None) -> dict:
        """Open a new issue."""
        return tracker.create(title, body, labels, assignee)

    @mcp.tool()
    def add_comment(number: int, body: str, author: str = "alice") -> dict:
        """Comment on an issue."""
        issue = tracker.get(number)
        tracker._user(author)
        if not body.strip():
            raise ToolError("a comment needs a body")
        issue["comments"].append(
            {"id": sum(len(i["comments"]) for i in tracker.issues.values()) + 1, "author": author, "body": body}
        )
        return issue

    @mcp.tool()
    def set_labels(number: int, labels: list[str]) -> dict:
        """Replace an issue's labels."""
        issue = tracker.get(number)
        tracker._labels(labels)
        issue["labels"] = sorted(set(labels))
        return issue

    @mcp.tool()
    def assign(number: int, assignee: str | None) -> dict:
        """Assign an issue to a user (or unassign with null)."""
        issue = tracker.get(number)
        tracker._user(assignee)
        issue["assignee"] = assignee
        return issue

    @mcp.tool()
    def close_issue(number: int, reason: str = "completed") -> dict:
        """Close an open issue as completed or not_planned."""
        issue = tracker.get(number)
        if reason not in ("completed", "not_planned"):
            raise ToolError("reason must be completed or not_planned")
        if issue["state"] == "closed":
            raise ToolError(f"issue #{number} is already closed")
        issue["state"], issue["state_reason"] = "closed", reason
        return issue

    @mcp.tool()
    def reopen_issue(number: int) -> dict:
        """Reopen a closed issue."""
        issue = tracker.get(number)
        if issue["state"] == "open":
            raise ToolError(f"issue #{number} is already open")
        issue["state"], issue["state_reason"] = "open", None
        return issue

    return mcp


if __name__ == "__main__":
    build_server(seeded()).run()
