import json

import pytest

from tests.builders import make_trajectory
from trajforge.schemas.splits import (
    TRAINING_STAGES,
    SplitConfig,
    readable_by,
    row_placement,
    split_of,
    split_of_task,
    task_draw,
    task_identity,
    task_key,
)


def record(**overrides) -> dict:
    return make_trajectory(**overrides).model_dump()


def test_collected_episodes_of_one_task_share_its_key():
    scripted = record(source={"kind": "collected", "by": "scripted", "origin": "terminal/count-lines#0"})
    explorer = record(
        source={"kind": "collected", "by": "explorer", "origin": "terminal/count-lines#3"}, task_description="x"
    )
    assert task_key(scripted) == task_key(explorer) == "task:terminal/count-lines"
    assert split_of(scripted) == split_of(explorer)
    # a replay of a simulated episode (sim-check's WM2Real, agent-rl's audit) is an episode of the same task
    replay = record(source={"kind": "collected", "by": "scripted", "origin": "terminal/count-lines.replay-step3.1#0"})
    assert task_key(replay) == task_key(scripted)


def test_every_replay_of_a_held_out_task_is_held_out():
    config = SplitConfig(held_out=0.3)
    held_out = [f"t{i}" for i in range(200) if split_of(collected(f"s/t{i}#0"), config) == "held_out"]
    assert held_out  # 200 tasks: some are held out
    replays = [collected(f"s/{task}.replay-{n}#0") for task in held_out for n in range(5)]
    assert all(split_of(replay, config) == "held_out" for replay in replays)


def collected(origin: str) -> dict:
    return record(source={"kind": "collected", "by": "scripted", "origin": origin})


def test_imports_use_the_source_task_id_then_the_trajectory():
    awb = record(
        source={"kind": "imported", "by": "agentworldbench", "origin": "a.jsonl:line 3"},
        metadata=json.dumps({"agentworldbench": {"id": 145256090131919, "turn_idx": 2}}),
    )
    assert task_key(awb) == "agentworldbench:145256090131919"
    atif = record(
        source={"kind": "imported", "by": "atif", "origin": "t.json"},
        metadata=json.dumps({"atif": {"session_id": "s-1"}}),
    )
    assert task_key(atif) == "atif:s-1"
    chat = record(source={"kind": "imported", "by": "chat", "origin": "c.jsonl:line 1"})
    assert task_key(chat) == f"trajectory:{chat['trajectory_id']}"


def test_one_draw_decides_test_then_validation_then_the_pools():
    rows = [record(source={"kind": "collected", "by": "s", "origin": f"suite/t{i}#0"}) for i in range(400)]
    plain = [split_of(r, SplitConfig(held_out=0.2)) for r in rows]
    pooled = [split_of(r, SplitConfig(held_out=0.2, sft_rl_share=0.5)) for r in rows]
    assert set(plain) == {"train", "validation", "held_out"} and 50 < plain.count("held_out") < 110
    assert 20 < plain.count("validation") < 65  # the default validation share, 0.1
    assert [p == "held_out" for p in pooled] == [p == "held_out" for p in plain]  # pools never move the held out
    assert [p == "validation" for p in pooled] == [p == "validation" for p in plain]
    assert 100 < pooled.count("sft_rl") < 220 and pooled.count("cpt") + pooled.count("sft_rl") == plain.count("train")
    assert task_draw("suite/t1", seed=1) != task_draw("suite/t1")
    with pytest.raises(ValueError):
        SplitConfig(held_out=1.5)


def test_knowledge_is_cpt_only_and_stages_read_their_splits():
    doc = record(source={"kind": "knowledge", "by": "knowledge", "origin": "man/ls.1.gz"})
    assert split_of(doc, SplitConfig(held_out=1.0)) == "cpt"
    assert readable_by("cpt", "cpt") and not readable_by("cpt", "sft") and not readable_by("held_out", "rl")
    assert readable_by("held_out", "eval") and not readable_by("train", "eval")
    for stage in TRAINING_STAGES:  # neither evaluation part is ever trained on
        assert not readable_by("validation", stage) and not readable_by("held_out", stage)
    assert not readable_by("validation", "eval")


def test_three_disjoint_parts_by_task_and_the_test_part_kept_whatever_the_validation_share():
    keys = [task_identity(f"count the lines of f{i}.txt", {f"f{i}.txt": "a\nb\n"}) for i in range(600)]
    sides = {key: split_of_task(key, None, SplitConfig(held_out=0.2, validation=0.15)) for key in keys}
    parts = {part: {k for k, side in sides.items() if side == part} for part in ("train", "validation", "held_out")}
    assert set(sides.values()) == set(parts) and sum(map(len, parts.values())) == len(keys)  # disjoint, all
    assert 60 < len(parts["validation"]) < 120 and 90 < len(parts["held_out"]) < 150
    without = {k for k in keys if split_of_task(k, None, SplitConfig(held_out=0.2, validation=0.0)) == "held_out"}
    assert parts["held_out"] == without  # adding a validation part moved no test task
    assert {split_of_task(k, None, SplitConfig(held_out=1.0)) for k in keys} == {"held_out"}  # shares cap at 1


def test_an_episode_s_recorded_task_identity_is_its_key_whatever_its_suite():
    key = task_identity("count the lines of a.txt", {"a.txt": "x\n"})
    assert key == task_identity("count the lines of a.txt", {"a.txt": "x\n"})
    assert key != task_identity("count the lines of a.txt", {"a.txt": "y\n"})  # other starting files: another task
    assert key != task_identity("count the words of a.txt", {"a.txt": "x\n"})
    meta = json.dumps({"task_id": "count", "task_key": key})
    one = record(source={"kind": "collected", "by": "s", "origin": "suite-a/count#0"}, metadata=meta)
    other = record(source={"kind": "simulated", "by": "s", "origin": "suite-b/t7.replay-2#1"}, metadata=meta)
    assert task_key(one) == task_key(other) == key
    assert split_of(one) == split_of(other)
    old = record(source={"kind": "collected", "by": "s", "origin": "suite-a/count#0"})  # recorded before the field
    assert task_key(old) == "task:suite-a/count"


def test_rows_written_before_the_split_columns_get_it_derived():
    row = record(source={"kind": "collected", "by": "s", "origin": "suite/t1#0"})
    assert row_placement(row) == ("task:suite/t1", split_of(row))
    assert row_placement({**row, "task": "task:x", "split": "held_out"}) == ("task:x", "held_out")


def test_a_held_out_family_is_held_out_whole_and_others_split_as_before():
    def generated(i: int, family: str | None) -> dict:
        meta = {"task_id": f"t{i}"} | ({"family": family} if family else {})
        return record(source={"kind": "collected", "by": "s", "origin": f"suite/t{i}#0"}, metadata=json.dumps(meta))

    config = SplitConfig(held_out=0.2, held_out_families=("kvstore",))
    assert {split_of(generated(i, "kvstore"), config) for i in range(50)} == {"held_out"}
    for i in range(50):  # a family not named, or no family: the draw decides, exactly as without the option
        for family in ("terminal-text", None):
            assert split_of(generated(i, family), config) == split_of(generated(i, family), SplitConfig(held_out=0.2))
    assert {split_of(generated(i, "terminal-text"), config) for i in range(50)} == {"train", "validation", "held_out"}
