import copy

import pytest
import yaml

from tests.builders import make_trajectory
from trajforge.masking.annotate import mask_trajectory
from trajforge.masking.information import build_predictability_table
from trajforge.masking.policy import POLICY_DIR, load_policy, parse_policy

PAPER = yaml.safe_load((POLICY_DIR / "paper.yaml").read_text())
LISTING = "".join(f"-rw-r--r-- 1 user user {100 + i} Jan  {i % 28 + 1} report_{i:03d}.csv\n" for i in range(40))


def _trajectory(pairs, weights=None, trajectory_id=None):
    turns = [
        {
            "index": i,
            "action": {"kind": "shell", "content": action},
            "observation": {"content": observation},
            "loss_weight": None if weights is None else weights[i],
        }
        for i, (action, observation) in enumerate(pairs)
    ]
    record = make_trajectory(turns=turns)
    return record.model_copy(update={"trajectory_id": trajectory_id}) if trajectory_id else record


def _policy(**changes):
    return parse_policy({**copy.deepcopy(PAPER), **changes})


def test_one_annotation_per_turn():
    # "echo step i" -> "step i\n": Wa = {echo, step, i}, Wo = {step, i}: OL 2/3, Nov 0: boilerplate.
    annotations = mask_trajectory(make_trajectory(4), load_policy("paper"))
    assert [a.turn_index for a in annotations] == [0, 1, 2, 3]
    assert {(a.mask.category, a.mask.keep_ratio) for a in annotations} == {("boilerplate", 0.1)}
    assert annotations[0].statistics.overlap == 2 / 3 and annotations[0].statistics.compression_gain is None


def test_fully_kept_turns_cover_the_observation():
    (annotation,) = mask_trajectory(_trajectory([("cat notes.txt", "milk eggs")]), load_policy("paper"))
    assert annotation.mask.category == "action" and annotation.mask.in_loss
    assert annotation.mask.spans == ((0, 9),) and annotation.mask.decided_by == "policy"


def test_turn_sampling_is_deterministic_and_keeps_about_the_ratio():
    policy = load_policy("paper")
    records = [_trajectory([("git status", "git status")] * 20, trajectory_id=f"t{i}") for i in range(100)]
    masks = [[a.mask for a in mask_trajectory(record, policy)] for record in records]
    assert masks == [[a.mask for a in mask_trajectory(record, policy)] for record in records]
    flat = [mask for per_record in masks for mask in per_record]
    assert {mask.category for mask in flat} == {"echo"}
    kept = [mask for mask in flat if mask.in_loss]
    assert 0.03 < len(kept) / len(flat) < 0.07
    assert all(mask.spans == ((0, 10),) for mask in kept)
    assert all(mask.spans == () for mask in flat if not mask.in_loss)
    reseeded = [a.mask.in_loss for record in records for a in mask_trajectory(record, _policy(seed=7))]
    assert reseeded != [mask.in_loss for mask in flat]


def test_span_mode_keeps_part_of_each_observation():
    policy = _policy(keep_mode="span")
    observation = "\n".join(["a b c"] * 8) + "\n"  # Wa = Wo: echo, 5%: 48 chars, one 6-char line kept at most
    boilerplate = "rm: cannot remove old data\n" * 10  # boilerplate, 10%: one line of ten
    annotations = mask_trajectory(_trajectory([("a b c", observation), ("rm -r old data", boilerplate)]), policy)
    assert [a.mask.category for a in annotations] == ["echo", "boilerplate"]
    assert annotations[0].mask.spans == () and not annotations[0].mask.in_loss
    assert annotations[1].mask.in_loss and annotations[1].mask.spans == ((108, 135),)


def test_loss_weight_replaces_the_keep_ratio():
    pairs = [("git status", "git status"), ("cat notes.txt", "milk eggs"), ("git status", "git status")]
    for policy in (load_policy("paper"), _policy(keep_mode="span")):
        for trajectory_id in ("a", "b", "c", "d"):
            masks = [a.mask for a in mask_trajectory(_trajectory(pairs, [1.0, 0.0, None], trajectory_id), policy)]
            assert masks[0].category == "echo" and masks[0].in_loss and masks[0].spans == ((0, 10),)
            assert masks[1].category == "action" and not masks[1].in_loss and masks[1].spans == ()
            assert [m.keep_ratio for m in masks] == [1.0, 0.0, 0.05]
            assert [m.decided_by for m in masks] == ["loss_weight", "loss_weight", "policy"]


def test_empty_actions_and_observations():
    pairs = [("", ""), ("ls", ""), ("", "out"), ("", "")]
    record = _trajectory(pairs)
    table = build_predictability_table([record])
    for policy in (load_policy("paper"), load_policy("information"), _policy(keep_mode="span")):
        annotations = mask_trajectory(record, policy, table)
        assert len(annotations) == 4
        for annotation in annotations:
            assert annotation.mask.spans in ((), ((0, annotation.statistics.observation_chars),))


def test_information_policy_needs_a_table():
    with pytest.raises(ValueError, match="'information' uses predictability: pass a predictability table"):
        mask_trajectory(make_trajectory(2), load_policy("information"))


def test_information_policy():
    corpus = [_trajectory([("cd /tmp", ""), (f"cat f{i}.txt", f"line {i}: " + "novel words " * i)]) for i in range(30)]
    corpus.append(_trajectory([("ls -l", LISTING), ("ls -l", LISTING), ("cat a.txt", "hello")]))
    table = build_predictability_table(corpus)
    policy = load_policy("information")
    cd, cat = mask_trajectory(corpus[5], policy, table)
    # shell:cd printed "" 30 times in 30: 30 / 34.
    assert cd.statistics.predictability == 30 / 34 and cd.mask.category == "predictable"
    assert cat.mask.category == "novel" and cat.mask.in_loss
    first, second, _ = mask_trajectory(corpus[-1], policy, table)
    # The second listing repeats the previous observation, which is part of its compression context.
    assert first.statistics.compression_gain < 0.1 and first.mask.category == "novel"
    assert second.statistics.compression_gain > 0.9 and second.mask.category == "redundant"
    without_history = parse_policy(
        {**yaml.safe_load((POLICY_DIR / "information.yaml").read_text()), "context": {"previous_observations": 0}}
    )
    assert mask_trajectory(corpus[-1], without_history, table)[1].mask.category == "novel"
