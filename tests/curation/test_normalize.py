from tests.builders import make_trajectory
from trajforge.curation.normalize import normalize, normalize_text


def test_normalize_text():
    assert normalize_text("a\r\nb\rc") == "a\nb\nc"
    assert normalize_text("\x1b[1;31mred\x1b[0m text  \nnext") == "red text\nnext"
    assert normalize_text("cafe\u0301") == "caf\u00e9"
    assert normalize_text("SQLite format 3\x00\x00\x00\x10\x00row") == "SQLite format 3\x10row"


def test_normalize_updates_the_content_id():
    turns = [
        {
            "index": 0,
            "action": {"kind": "shell", "content": "ls\r\n"},
            "observation": {"content": "\x1b[34mdir\x1b[0m\r\n"},
        }
    ]
    noisy = make_trajectory(turns=turns)
    clean = normalize(noisy)
    assert clean.turns[0].observation.content == "dir\n" and clean.turns[0].action.content == "ls\n"
    assert clean.trajectory_id == clean.content_id() != noisy.trajectory_id
    assert normalize(clean) == clean
