from tests.builders import make_trajectory
from trajforge.schemas.manifest import RejectionWriter
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.sources import ValidRecords, read_records


def test_valid_records_split_every_result_into_kept_or_rejected(tmp_path):
    (path,) = write_segments([make_trajectory(2), make_trajectory(3)], tmp_path / "in")
    path.write_bytes(path.read_bytes() + b'{"broken": \n')
    rejected: list = []
    valid = ValidRecords(read_records([path]))
    assert [len(r.turns) for r in valid.rejecting_into(rejected)] == [2, 3]
    assert valid.count == 2 and [r.locator for r in rejected] == ["line 3"]
    (tmp_path / "out").mkdir()
    with RejectionWriter(tmp_path / "out") as writer:
        assert len(list(ValidRecords(read_records([path])).rejecting_into(writer))) == 2
    assert writer.count == 1 and (tmp_path / "out" / "_rejections.jsonl").read_text().count("\n") == 1
