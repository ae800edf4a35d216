"""World-knowledge documents for CPT (`build-corpus --knowledge PATH`): plain text, Markdown, HTML, JSON Lines
with a `text` field, and manual pages (roff, gzip'd or not), each becoming a single-turn record of the same
schema. The document is the observation, wholly in the loss (loss_weight 1); the action names it (`ls(1)`,
`README.md`), so the model sees what it is reading about.

A long document is cut into parts of at most MAX_DOCUMENT_CHARS at paragraph (else line) boundaries, each its
own row (`grep(1), part 2/5`): training splits long rows at its context anyway, and a share cap can then take
as much of a page as fits. A file that is binary or not UTF-8 is one rejected result that names it, with its
bytes; nothing else is lost."""

import gzip
import json
import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path

from trajforge.schemas.formats.roff import render_man
from trajforge.schemas.records import new_trajectory
from trajforge.schemas.validation import Problem, ReadResult

KNOWLEDGE = "knowledge"  # the input "format" name read_records dispatches on
MAX_DOCUMENT_CHARS = 8000
MAN_PAGE = re.compile(r"\.[1-9][a-z0-9]*$")  # ls.1, tar.1, CA.pl.1ssl
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
SKIPPED_BLOCKS = ("script", "style", "head", "nav", "noscript")
BLOCKS = ("p", "div", "br", "li", "tr", "pre", "section", "article", "h1", "h2", "h3", "h4", "h5", "h6", "table")


def find_knowledge_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[str]]:
    """Every file under the paths (hidden files and bookkeeping `_*` files aside), and the paths that do not exist."""
    files: list[Path] = []
    missing: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))
        elif path.is_file():
            files.append(path)
        else:
            missing.append(f"{path}: no such knowledge file or folder")
    return files, missing


class _TextOfHtml(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
        if tag in SKIPPED_BLOCKS:
            self.skipping += 1
        elif tag in BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if tag in SKIPPED_BLOCKS:
            self.skipping = max(0, self.skipping - 1)
        elif tag in BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        elif not self.skipping:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page: scripts, styles, head and navigation dropped, blocks on their own lines."""
    parser = _TextOfHtml()
    parser.feed(html)
    parser.close()
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in "".join(parser.parts).splitlines()]
    return parser.title.strip(), re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def _decode(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def document_record(text: str, title: str, kind: str, origin: str):
    return new_trajectory(
        domain="other",
        source={"kind": "knowledge", "by": f"knowledge:{kind}", "origin": origin},
        environment={"name": "knowledge"},
        task_description=f"Reference document: {title}",
        agent={"name": "none"},
        turns=[
            {
                "index": 0,
                "action": {"kind": "message", "content": title},
                "observation": {"content": text, "format": "text"},
                "loss_weight": 1.0,  # the whole document is in the loss
            }
        ],
    )


def read(path: Path, options=None) -> Iterator[ReadResult]:
    """The documents of one knowledge file; a file (or JSON line) that cannot be one is a rejected result."""
    source = str(path)
    raw = path.read_bytes()
    name = path.name
    if name.endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            yield ReadResult(source, "file", None, [Problem("", f"not a readable gzip file: {exc}")], raw)
            return
        name = name[: -len(".gz")]
    text = _decode(raw)
    if text is None:
        why = "binary file (NUL bytes)" if b"\x00" in raw else "not UTF-8 text"
        yield ReadResult(source, "file", None, [Problem("", f"knowledge documents must be UTF-8 text: {why}")], raw)
        return
    if name.endswith(".jsonl"):
        yield from _json_lines(path, text)
        return
    if name.endswith(HTML_SUFFIXES):
        title, body, kind = *html_to_text(text), "html"
        title = title or name
    elif MAN_PAGE.search(name):
        body, kind = render_man(text), "man"
        page, _, section = name.rpartition(".")
        title = f"{page}({section})"
    else:
        body, title, kind = text, name, "markdown" if name.endswith((".md", ".markdown")) else "text"
    yield from _parts(source, "file", body, title, kind, source, raw)


def split_document(text: str, limit: int = MAX_DOCUMENT_CHARS) -> list[str]:
    """Consecutive parts of at most `limit` characters that join back to the text, cut after a blank line where
    one is near enough, else after a line, else anywhere."""
    parts = []
    while len(text) > limit:
        window = text[:limit]
        cut = window.rfind("\n\n") + 2
        if cut < limit // 2:
            cut = window.rfind("\n") + 1
        if cut < limit // 2:
            cut = limit
        parts.append(text[:cut])
        text = text[cut:]
    return [*parts, text] if text else parts


def _parts(source: str, locator: str, body: str, title: str, kind: str, origin: str, raw: bytes):
    if not body.strip():
        yield ReadResult(source, locator, None, [Problem("", "empty document: no text")], raw)
        return
    parts = split_document(body)
    for i, part in enumerate(parts, 1):
        if len(parts) == 1:
            yield ReadResult(source, locator, document_record(part, title, kind, origin), [])
        else:
            name, where = f"{title}, part {i}/{len(parts)}", f"{locator} part {i}"
            yield ReadResult(source, where, document_record(part, name, kind, f"{origin}#part{i}"), [])


def _json_lines(path: Path, text: str) -> Iterator[ReadResult]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        locator, raw = f"line {number}", line.encode()
        try:
            value = json.loads(line)
        except ValueError as exc:
            yield ReadResult(str(path), locator, None, [Problem("", f"not JSON: {exc}")], raw)
            continue
        body = value.get("text") if isinstance(value, dict) else None
        if not isinstance(body, str):
            yield ReadResult(str(path), locator, None, [Problem("text", "missing, or not a string")], raw)
            continue
        title = value.get("title") if isinstance(value.get("title"), str) else f"{path.name}:{number}"
        yield from _parts(str(path), locator, body, title, "jsonl", f"{path}:{locator}", raw)
