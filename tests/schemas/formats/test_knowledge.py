import gzip
import json

from tests.schemas.formats.test_roff import MAN
from trajforge.schemas.formats.knowledge import find_knowledge_files, html_to_text, read


def test_each_kind_becomes_one_single_turn_document_wholly_in_the_loss(tmp_path):
    (tmp_path / "notes.txt").write_text("Plain notes about tar.\n")
    (tmp_path / "guide.md").write_text("# Guide\n\nUse `grep -c`.\n")
    (tmp_path / "page.html").write_text(
        "<html><head><title>Find</title><style>p{}</style></head><body><nav>menu</nav>"
        "<p>find walks &amp; lists.</p><script>x()</script></body></html>"
    )
    (tmp_path / "wc.1.gz").write_bytes(gzip.compress(MAN.encode()))
    (tmp_path / "docs.jsonl").write_text(
        json.dumps({"text": "jq filters JSON.", "title": "jq"}) + "\n\n" + json.dumps({"body": "no text"}) + "\n"
    )
    files, missing = find_knowledge_files([tmp_path, tmp_path / "absent"])
    assert len(files) == 5 and missing == [f"{tmp_path / 'absent'}: no such knowledge file or folder"]
    results = {(r.source.rsplit("/", 1)[1], r.locator): r for f in files for r in read(f)}
    assert results[("docs.jsonl", "line 3")].reasons() == ["text: missing, or not a string"]
    docs = {key: r.record for key, r in results.items() if r.ok}
    assert len(docs) == 5
    for record in docs.values():
        assert record.source.kind == "knowledge" and len(record.turns) == 1
        assert record.turns[0].loss_weight == 1.0 and record.turns[0].observation.content
    titles = {key[0]: r.turns[0].action.content for key, r in docs.items()}
    assert titles == {"notes.txt": "notes.txt", "guide.md": "guide.md", "page.html": "Find", "wc.1.gz": "wc(1)",
                      "docs.jsonl": "jq"}  # fmt: skip
    assert docs[("page.html", "file")].turns[0].observation.content == "find walks & lists.\n"
    assert docs[("docs.jsonl", "line 1")].source.origin.endswith("docs.jsonl:line 1")


def test_binary_and_non_utf8_files_are_rejected_by_name_with_their_bytes(tmp_path):
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    (tmp_path / "broken.1.gz").write_bytes(b"not gzip")
    out = {p.name: list(read(p)) for p in sorted(tmp_path.iterdir())}
    assert out["image.png"][0].reasons() == ["knowledge documents must be UTF-8 text: binary file (NUL bytes)"]
    assert out["latin1.txt"][0].reasons() == ["knowledge documents must be UTF-8 text: not UTF-8 text"]
    assert out["latin1.txt"][0].raw == "café".encode("latin-1")
    assert out["broken.1.gz"][0].reasons()[0].startswith("not a readable gzip file")
    assert all(len(r) == 1 and not r[0].ok for r in out.values())


def test_html_blocks_become_lines():
    title, text = html_to_text("<title> T </title><h1>Head</h1><ul><li>one</li><li>two</li></ul>")
    assert title == "T" and text == "Head\n\none\n\ntwo\n"


def test_a_long_document_is_cut_into_parts_at_paragraphs(tmp_path):
    from trajforge.schemas.formats.knowledge import MAX_DOCUMENT_CHARS, split_document

    text = "".join(f"Paragraph {i}: " + "word " * 150 + "\n\n" for i in range(40))
    parts = split_document(text)
    assert "".join(parts) == text and all(len(p) <= MAX_DOCUMENT_CHARS for p in parts) and len(parts) > 2
    assert all(p.endswith("\n\n") for p in parts[:-1])  # cut between paragraphs
    (tmp_path / "long.md").write_text(text)
    results = list(read(tmp_path / "long.md"))
    assert [r.locator for r in results] == [f"file part {i}" for i in range(1, len(parts) + 1)]
    assert results[1].record.turns[0].action.content == f"long.md, part 2/{len(parts)}"
    assert "".join(r.record.turns[0].observation.content for r in results) == text
    assert split_document("x" * 20_000) == ["x" * 8000, "x" * 8000, "x" * 4000]
