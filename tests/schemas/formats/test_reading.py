"""What every foreign format shares (schemas/formats/__init__.py): one reading of a JSON file into values, one rule
for a record's `source.origin`, one refusal to export a format trajforge only imports."""

import shutil

import pytest

from tests.builders import EXAMPLES, FORMAT_SAMPLES
from trajforge.schemas.formats import FORMATS, ImportOptions, get_format

# The formats that read one JSON document a file, by the file name they read.
DOCUMENTS = {
    "atif": "t.json",
    "adp": "t.json",
    "openhands": "t.json",
    "swe-agent": "t.traj",
    "mini-swe-agent": "t.traj.json",
    "chat-tools": "t.json",
}
IMPORT_ONLY = ["adp", "openhands", "swe-agent", "mini-swe-agent", "asciinema", "chat-tools"]


def read(fmt: str, path) -> list:
    return list(get_format(fmt).read(path, ImportOptions()))


def test_every_format_has_a_sample_here():
    assert sorted(FORMAT_SAMPLES) == sorted(FORMATS)


@pytest.mark.parametrize("fmt", sorted(FORMAT_SAMPLES))
def test_a_records_origin_is_its_files_name_and_where_in_it(tmp_path, fmt):
    """Wherever the file lies, the origin is its name (with the locator where the file holds several records):
    no format records the folders it was read from."""
    name, locators = FORMAT_SAMPLES[fmt]
    path = tmp_path / "some" / "folder" / name
    path.parent.mkdir(parents=True)
    shutil.copy(EXAMPLES / name, path)
    results = [r for r in read(fmt, path) if " subagent" not in r.locator]
    assert all(r.ok for r in results), [r.reasons() for r in results]
    assert [r.locator for r in results] == locators
    assert [r.record.source.origin for r in results] == [
        name if locator == "file" else f"{name}:{locator}" for locator in locators
    ]


@pytest.mark.parametrize("fmt", sorted(DOCUMENTS))
def test_a_json_document_is_decoded_one_way_its_errors_with_line_and_column(tmp_path, fmt):
    broken = tmp_path / DOCUMENTS[fmt]
    broken.write_text('{\n  "steps": [\n    {"a": 1,}\n  ]\n}\n')
    assert [r.reasons() for r in read(fmt, broken)] == [
        ["invalid JSON: Expecting property name enclosed in double quotes at line 3, column 13"]
    ]
    broken.write_text("\n")
    assert [r.reasons() for r in read(fmt, broken)] == [["empty file: no records"]]
    broken.write_text("7")
    assert [r.reasons() for r in read(fmt, broken)] == [["expected a JSON object, got int"]]


@pytest.mark.parametrize("fmt", IMPORT_ONLY)
def test_every_import_only_format_refuses_export_in_the_same_words(tmp_path, fmt):
    with pytest.raises(ValueError) as refused:
        get_format(fmt).write([], tmp_path / "out")
    assert str(refused.value) == (
        f"{fmt} is read only: trajforge imports it but does not write it (export to atif or chat)"
    )
    assert not (tmp_path / "out").exists()
