import pickle
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import make_trajectory
from trajforge.masking.information import (
    MAX_CONTEXT_BYTES,
    MAX_OBSERVATION_BYTES,
    PredictabilityCombiner,
    action_key,
    build_predictability_table,
    compression_gain,
    observation_fingerprint,
    predictability,
)
from trajforge.schemas.records import Action

LISTING = "".join(f"-rw-r--r-- 1 user user {100 + i} Jan  {i % 28 + 1} report_{i:03d}.csv\n" for i in range(60))


def _words(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)) for _ in range(n))


def test_compression_gain_follows_its_formula():
    observation, context = "milk eggs bread butter", "cat notes.txt\nmilk eggs bread"

    def size(data: bytes, zdict: bytes = b"") -> int:
        settings = (6, zlib.DEFLATED, -14, 4, zlib.Z_DEFAULT_STRATEGY)  # level, raw deflate in 16 KiB, memLevel
        compressor = zlib.compressobj(*settings, zdict) if zdict else zlib.compressobj(*settings)
        return len(compressor.compress(data) + compressor.flush())

    empty = size(b"")
    alone, given_context = size(observation.encode()) - empty, size(observation.encode(), context.encode()) - empty
    assert compression_gain(observation, context) == 1 - given_context / alone


def test_an_observation_its_context_contains_has_high_gain():
    assert compression_gain(LISTING, "ls -l\n" + LISTING) > 0.9


def test_unrelated_text_has_no_gain():
    assert compression_gain(_words(80, seed=1), _words(80, seed=2)) < 0.1


def test_gain_is_zero_without_observation_or_context():
    assert compression_gain("", "ls") == 0.0
    assert compression_gain("some output", "") == 0.0
    assert compression_gain("some output", "ctx", max_context_bytes=0) == 0.0


def test_only_the_context_tail_counts():
    context = LISTING + _words(200, seed=3)  # the listing lies more than 1 KiB before the end
    assert compression_gain(LISTING, context, max_context_bytes=len(context)) > 0.9
    assert compression_gain(LISTING, context, max_context_bytes=1024) < 0.2


def test_context_is_capped():
    context = LISTING + "x" * MAX_CONTEXT_BYTES
    assert compression_gain(LISTING, context, max_context_bytes=10 * len(context)) < 0.2


def test_gain_of_a_huge_observation_reads_its_head():
    huge = LISTING * 2000
    assert len(huge) > 10 * MAX_OBSERVATION_BYTES
    assert compression_gain(huge, LISTING) == compression_gain(huge[:MAX_OBSERVATION_BYTES], LISTING)


@given(st.text(max_size=300), st.text(max_size=300))
def test_gain_is_bounded(observation, context):
    assert 0.0 <= compression_gain(observation, context) <= 1.0


@pytest.mark.parametrize(
    ("action", "key"),
    [
        (Action(kind="shell", content="ls -la"), "shell:ls"),
        (Action(kind="shell", content="sudo /bin/ls -la /root"), "shell:ls"),
        (Action(kind="shell", content="FOO=1 BAR=2 python3 train.py"), "shell:python3"),
        (Action(kind="shell", content="'/usr/bin/Python3' -c 'print(1)'"), "shell:python3"),
        (Action(kind="shell", content="cd /tmp && ls"), "shell:cd"),
        (Action(kind="shell", content="ls|wc -l"), "shell:ls"),
        (Action(kind="shell", content="git status --short"), "shell:git status"),
        (Action(kind="shell", content="git --no-pager log -3"), "shell:git log"),
        (Action(kind="shell", content="git"), "shell:git"),
        (Action(kind="shell", content=""), "shell"),
        (Action(kind="keystrokes", content="C-c"), "keystrokes:c-c"),
        (Action(kind="message", content="GET /keys/color"), "message:get"),
        (Action(kind="tool_call", name="get_page", content='{"id": "p1"}'), "tool_call:get_page"),
        (Action(kind="tool_call", content='{"id": "p1"}'), "tool_call"),
        (Action(kind="browser", name="click", content='{"ref": "e12"}'), "browser:click"),
    ],
)
def test_action_keys(action, key):
    assert action_key(action) == key


def test_fingerprints_ignore_numbers_ids_case_and_spacing():
    assert observation_fingerprint("total 12\n") == observation_fingerprint("Total   345")
    assert observation_fingerprint("commit 3f2a9c1d") == observation_fingerprint("commit 9b8e7d6c")
    assert observation_fingerprint("out_003.csv v1.2") == observation_fingerprint("out_12.csv v2.10")
    assert observation_fingerprint("id 123e4567-e89b-12d3") == observation_fingerprint("id 00aa11bb-f00f-0a0a")
    assert observation_fingerprint("cafe") != observation_fingerprint("babe")  # hex-like only with a digit
    assert observation_fingerprint("milk eggs") != observation_fingerprint("milk bread")
    assert observation_fingerprint("") == observation_fingerprint(" \n ")


def _cd_corpus(combiner: PredictabilityCombiner):
    acc = combiner.create()
    for observation in ("", "", "", "bash: cd: nope: No such file or directory"):
        combiner.add(acc, "shell:cd", observation)
    combiner.add(acc, "shell:cat", "milk eggs")
    return acc


def test_predictability_on_a_hand_counted_corpus():
    combiner = PredictabilityCombiner()
    table = combiner.extract(_cd_corpus(combiner))
    # shell:cd has n = 4 observations, 3 of them empty; the prior adds 4 to n.
    assert predictability(table, "shell:cd", "") == 3 / 8
    assert predictability(table, "shell:cd", "bash: cd: nope: No such file or directory") == 1 / 8
    assert predictability(table, "shell:cd", "something new") == 0.0
    assert predictability(table, "shell:cat", "milk eggs") == 1 / 5  # a single sighting gives low confidence
    assert predictability(table, "shell:rm", "") == 0.0
    assert predictability(table, "shell:cd", "", prior=0) == 3 / 4


def test_frequent_observations_approach_one():
    combiner = PredictabilityCombiner()
    acc = combiner.create()
    for _ in range(100):
        combiner.add(acc, "shell:mkdir", "")
    assert predictability(combiner.extract(acc), "shell:mkdir", "") == 100 / 104


def test_a_key_with_many_distinct_observations_switches_to_a_sketch():
    combiner = PredictabilityCombiner(exact_limit=8)
    acc = combiner.create()
    for i in range(50):
        for _ in range(i % 3 + 1):
            combiner.add(acc, "shell:cat", f"file {i} says {'x' * i}")
    for _ in range(40):
        combiner.add(acc, "shell:cat", "same")
    table = combiner.extract(acc)
    entry = table.keys["shell:cat"]
    assert entry.exact is None and len(entry.sketch) == 256 * 4
    n, count = table.counts("shell:cat", observation_fingerprint("same"))
    assert n == 139 and count >= 40  # a count-min sketch never underestimates
    assert predictability(table, "shell:cat", "same") == pytest.approx(40 / 143, abs=0.05)


PAIRS = st.lists(
    st.tuples(st.sampled_from(["shell:ls", "shell:cd", "tool_call:get"]), st.sampled_from(["", "a", "b", "c", "d"])),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(PAIRS, st.lists(st.integers(0, 5), max_size=60), st.randoms(use_true_random=False))
def test_tables_do_not_depend_on_how_the_corpus_was_split_or_merged(pairs, cuts, rng):
    combiner = PredictabilityCombiner(exact_limit=2, sketch_width=16)
    whole = combiner.create()
    for key, observation in pairs:
        combiner.add(whole, key, observation)

    parts, start = [], 0
    for cut in cuts:
        parts.append(pairs[start : start + cut])
        start += cut
    parts.append(pairs[start:])
    accs = []
    for part in parts:
        acc = combiner.create()
        for key, observation in part:
            combiner.add(acc, key, observation)
        accs.append(acc)
    rng.shuffle(accs)
    while len(accs) > 1:  # merge in a random tree shape
        i = rng.randrange(len(accs) - 1)
        accs[i : i + 2] = [combiner.merge(accs[i : i + 2])]
    assert combiner.extract(accs[0]) == combiner.extract(whole)


def test_merge_leaves_all_but_the_first_accumulator_untouched():
    combiner = PredictabilityCombiner(exact_limit=1)
    first, second = _cd_corpus(combiner), _cd_corpus(combiner)
    before = combiner.extract(second)
    merged = combiner.merge([first, second])
    assert merged is first
    assert combiner.extract(second) == before
    assert merged["shell:cd"].n == 8
    assert combiner.merge([]) == {}


def test_tables_pickle_and_build_from_trajectories():
    table = build_predictability_table([make_trajectory(3), make_trajectory(2)])
    assert set(table.keys) == {"shell:echo"}
    assert table.keys["shell:echo"].n == 5
    assert pickle.loads(pickle.dumps(table)) == table
    # "step 0\n" and "step 1\n" share a fingerprint: 5 of 5 observations look alike.
    assert predictability(table, "shell:echo", "step 7\n") == 5 / 9


def test_bad_combiner_settings():
    with pytest.raises(ValueError, match="sketch_depth"):
        PredictabilityCombiner(sketch_depth=5)
