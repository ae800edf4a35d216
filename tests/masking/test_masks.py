from hypothesis import given
from hypothesis import strategies as st

from trajforge.masking.masks import kept_spans, sample_fraction, sampled_in_loss

FOUR_LINES = "aaa\nbbb\nccc\nddd\n"


def test_draws_depend_only_on_their_arguments():
    draw = sample_fraction(0, "traj-1", 3)
    assert 0.0 <= draw < 1.0
    assert draw == sample_fraction(0, "traj-1", 3)
    others = {sample_fraction(1, "traj-1", 3), sample_fraction(0, "traj-2", 3), sample_fraction(0, "traj-1", 4)}
    assert draw not in others and len(others) == 3


def test_sampling_keeps_about_the_ratio():
    for keep in (0.05, 0.1, 0.5):
        kept = sum(sampled_in_loss(keep, 0, f"traj-{i // 20}", i % 20) for i in range(20_000))
        assert abs(kept / 20_000 - keep) < 0.01


def test_sampling_extremes():
    assert all(sampled_in_loss(1.0, 0, "t", i) for i in range(200))
    assert not any(sampled_in_loss(0.0, 0, "t", i) for i in range(200))


def test_full_and_empty_keeps():
    assert kept_spans(FOUR_LINES, 1.0) == ((0, 16),)
    assert kept_spans("", 1.0) == ((0, 0),)
    assert kept_spans(FOUR_LINES, 0.0) == ()
    assert kept_spans("", 0.5) == ()


def test_spread_keeps_every_other_line_for_one_half():
    assert kept_spans(FOUR_LINES, 0.5) == ((0, 4), (8, 12))


def test_head_keeps_the_leading_lines():
    assert kept_spans(FOUR_LINES, 0.5, layout="head") == ((0, 8),)
    assert kept_spans(FOUR_LINES, 0.3, layout="head") == ((0, 4),)


def test_long_lines_are_cut_into_chunks():
    assert kept_spans("x" * 1000, 0.3, chunk_chars=100) == ((100, 200), (400, 500), (800, 900))
    assert kept_spans("x" * 1000, 0.3, layout="head", chunk_chars=100) == ((0, 300),)


def test_a_single_short_line_is_kept_only_from_one_half():
    assert kept_spans("ok\n", 0.49) == ()
    assert kept_spans("ok\n", 0.5) == ((0, 3),)


def _boundaries(text: str, chunk_chars: int) -> set[int]:
    out, start = {0, len(text)}, 0
    for line in text.splitlines(keepends=True):
        out.update(range(start, start + len(line), chunk_chars))
        start += len(line)
    return out


@given(
    st.text(alphabet="ab \n\r", max_size=400),
    st.floats(0, 1),
    st.sampled_from(["spread", "head"]),
    st.integers(1, 50),
)
def test_spans_are_ordered_piece_aligned_and_near_the_ratio(text, keep, layout, chunk_chars):
    spans = kept_spans(text, keep, layout, chunk_chars)
    boundaries = _boundaries(text, chunk_chars)
    previous_end = -1
    for start, end in spans:
        assert previous_end < start <= end <= len(text) or (start == end == len(text) == 0)
        assert start in boundaries and end in boundaries
        previous_end = end
    kept = sum(end - start for start, end in spans)
    longest_piece = max((min(len(line), chunk_chars) for line in text.splitlines(keepends=True)), default=0)
    if layout == "spread" or keep in (0.0, 1.0):
        assert abs(kept - keep * len(text)) <= longest_piece / 2 + 1e-9
    if layout == "head" and spans:
        assert spans[0][0] == 0 and len(spans) == 1
