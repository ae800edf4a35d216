import json

from trajforge.training.chat_models import stage_of


def checkpoint(folder, **info):
    folder.mkdir(parents=True)
    (folder / "checkpoint.json").write_text(json.dumps(info))
    return folder


def test_stage_of_reads_the_checkpoint(tmp_path):
    assert stage_of(checkpoint(tmp_path / "a", stage="cpt", mask_mode="masked")) == "cpt"
    assert stage_of(checkpoint(tmp_path / "b", stage="cpt", mask_mode="all")) == "cpt --no-mask"
    assert stage_of(checkpoint(tmp_path / "c", stage="rl")) == "rl"
    assert stage_of(tmp_path / "none") is None
