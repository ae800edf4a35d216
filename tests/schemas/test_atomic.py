import os

import pytest

from trajforge.schemas.atomic import atomic_write, remove_stale_temporaries


def test_a_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), atomic_write(tmp_path / "out.txt", "w") as f:
        f.write("half")
        raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_written_files_have_the_usual_mode(tmp_path):
    with atomic_write(tmp_path / "out.txt", "w") as f:
        f.write("done")
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "out.txt").stat().st_mode & 0o777 == 0o666 & ~mask


def test_temporaries_of_a_killed_process_are_removed(tmp_path):
    (tmp_path / "cpt").mkdir()
    (tmp_path / "._manifest.json.abc123.tmp").write_text("{")
    (tmp_path / "cpt" / ".shard-1.arrow.x9.tmp").write_bytes(b"")
    (tmp_path / "keep.tmp").write_text("not ours")
    assert remove_stale_temporaries(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["keep.tmp"]
