import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trajforge.masking.statistics import MAX_WORD_CHARS, TurnStatistics, turn_statistics, word_set


def test_words_are_lowercased_distinct_runs_of_word_characters():
    assert word_set("cat ./Notes.TXT notes") == {"cat", "notes", "txt"}
    assert word_set("src_dir/a-b && Grüße 42") == {"src_dir", "a", "b", "grüße", "42"}
    assert word_set("") == set() and word_set("&& -- |") == set()


def test_novel_short_output():
    # Wa = {cat, notes, txt}, Wo = {milk, eggs}: nothing shared.
    assert turn_statistics("cat notes.txt", "milk eggs") == TurnStatistics(
        overlap=0.0, novelty=1.0, jaccard=0.0, length_ratio=9 / 13, action_chars=13, observation_chars=9
    )


def test_echoed_words():
    # Wa = {echo, hello, world}, Wo = {hello, world}.
    stats = turn_statistics("echo hello world", "Hello world\nhello\n")
    assert stats.overlap == 2 / 3
    assert stats.novelty == 0.0
    assert stats.jaccard == 2 / 3
    assert stats.length_ratio == 18 / 16


def test_partial_overlap():
    # Wa = {rm, r, old, data}, Wo = {rm, cannot, remove, old, data}: 3 shared, 6 in the union.
    stats = turn_statistics("rm -r old data", "rm: cannot remove old data")
    assert (stats.overlap, stats.novelty, stats.jaccard) == (3 / 4, 2 / 5, 3 / 6)


@pytest.mark.parametrize(
    ("action", "observation", "expected"),
    [
        ("", "", (0.0, 0.0, 0.0, 0.0)),
        ("ls", "", (0.0, 0.0, 0.0, 0.0)),
        ("", "abc", (0.0, 1.0, 0.0, 3.0)),  # R divides by max(1, chars(action))
        ("&&", "--", (0.0, 0.0, 0.0, 1.0)),  # no words on either side
    ],
)
def test_empty_texts_and_word_sets(action, observation, expected):
    stats = turn_statistics(action, observation)
    assert (stats.overlap, stats.novelty, stats.jaccard, stats.length_ratio) == expected


def test_word_sets_read_the_head_of_long_texts_but_lengths_count_everything():
    observation = "x " * (MAX_WORD_CHARS // 2) + "needle"
    stats = turn_statistics("grep needle", observation)
    assert stats.overlap == 0.0  # "needle" lies past the cap
    assert stats.observation_chars == len(observation)


def test_information_fields_pass_through_and_default_to_none():
    assert turn_statistics("a", "b").compression_gain is None
    stats = turn_statistics("a", "b", compression_gain=0.25, predictability=0.5)
    assert (stats.compression_gain, stats.predictability) == (0.25, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.overlap = 1.0


@given(st.text(max_size=200), st.text(max_size=200))
def test_ratios_are_bounded_and_jaccard_is_symmetric(action, observation):
    stats = turn_statistics(action, observation)
    for value in (stats.overlap, stats.novelty, stats.jaccard):
        assert 0.0 <= value <= 1.0
    assert stats.jaccard <= stats.overlap
    assert stats.jaccard == turn_statistics(observation, action).jaccard
