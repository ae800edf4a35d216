"""The paper's Search domain, offline: a local search engine over a bundled corpus with duckdb full-text search
(BM25), served as MCP tools `web_search` (query -> ranked url, title, snippet, date) and `web_extractor`
(url -> page text)."""

import importlib.resources
import json
import os
from pathlib import Path

import duckdb
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

CORPUS = Path(__file__).resolve().parents[1] / "data" / "search_corpus.jsonl"
SNIPPET_CHARS = 160


def fts_extension() -> str:
    """The fts extension from the `duckdb-extension-fts` wheel: nothing is downloaded at run time."""
    root = importlib.resources.files("duckdb_extension_fts") / "extensions" / f"v{duckdb.__version__}"
    return str(root / "fts.duckdb_extension")


class SearchIndex:
    def __init__(self, corpus: Path = CORPUS):
        self.con = duckdb.connect()
        self.con.execute(f"LOAD '{fts_extension()}'")
        self.con.execute("create table docs(url varchar primary key, title varchar, date varchar, text varchar)")
        rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
        self.con.executemany(
            "insert into docs values (?, ?, ?, ?)", [(r["url"], r["title"], r["date"], r["text"]) for r in rows]
        )
        self.con.execute("pragma create_fts_index('docs', 'url', 'title', 'text', overwrite=1)")

    def search(self, query: str, top_k: int) -> list[dict]:
        rows = self.con.execute(
            "select url, title, date, text, fts_main_docs.match_bm25(url, ?) as score from docs "
            "where score is not null order by score desc, url limit ?",
            [query, top_k],
        ).fetchall()
        return [
            {"url": url, "title": title, "snippet": _snippet(text, query), "date": date}
            for url, title, date, text, _ in rows
        ]

    def extract(self, url: str) -> dict | None:
        row = self.con.execute("select url, title, date, text from docs where url = ?", [url]).fetchone()
        return None if row is None else {"url": row[0], "title": row[1], "date": row[2], "text": row[3]}


def _snippet(text: str, query: str) -> str:
    lowered = text.lower()
    positions = [lowered.find(w) for w in query.lower().split() if len(w) > 2 and lowered.find(w) >= 0]
    start = max(0, min(positions) - 40) if positions else 0
    snippet = text[start : start + SNIPPET_CHARS]
    return ("..." if start else "") + snippet + ("..." if start + SNIPPET_CHARS < len(text) else "")


def build_server(index: SearchIndex) -> MCPServer:
    mcp = MCPServer("search", version="1.0", log_level="WARNING")

    @mcp.tool()
    def web_search(query: str, top_k: int = 5) -> dict:
        """Search the web. Returns ranked results with url, title, snippet and date."""
        if not query.strip():
            raise ToolError("query must not be empty")
        if not 1 <= top_k <= 20:
            raise ToolError("top_k must be between 1 and 20")
        return {"query": query, "results": index.search(query, top_k)}

    @mcp.tool()
    def web_extractor(url: str) -> dict:
        """Fetch a web page and return its main text."""
        page = index.extract(url)
        if page is None:
            raise ToolError(f"could not fetch {url}: 404 Not Found")
        return page

    return mcp


if __name__ == "__main__":
    build_server(SearchIndex(Path(os.environ.get("TRAJFORGE_SEARCH_CORPUS", CORPUS)))).run()
