"""Each adversary kind on hand-written turns: what it makes, and the embedded judge ranking the real observation
above it (a terminal listing, an MCP JSON result, a web page, an error)."""

import json
import random

import pytest

from trajforge.evaluation.adversaries import KINDS, CalibrationTurn, adversaries
from trajforge.evaluation.embedded import EmbeddedJudge

LISTING_BEFORE = "total 8\n-rw-r--r-- 1 agent agent 14 notes.txt\n-rw-r--r-- 1 agent agent 20 todo.md"
LISTING = LISTING_BEFORE.replace("total 8", "total 12") + "\n-rw-r--r-- 1 agent agent 0 report.csv"
MCP = json.dumps(
    {"content": [{"type": "text", "text": json.dumps({"id": "row_0007", "title": "Importer"})}], "isError": False}
)
PAGE = 'URL: http://shop.local/cart\nTitle: Cart\nFocused: none\n- heading "Cart" [ref=e1]\n- text "2 items, $31.50"'
ERROR = "cat: /srv/secret.txt: Permission denied"


def _turn(domain, history, action, reference, others) -> CalibrationTurn:
    return CalibrationTurn("t:1", domain, None, history, action, reference, others=others)


TURNS = {
    "terminal": _turn("terminal", (("ls -l", LISTING_BEFORE), ("touch report.csv", "")), "ls -l", LISTING,
                     ("total 4\n-rw-r--r-- 1 agent agent 9 a.txt",)),
    "mcp": _turn("mcp", (("list_rows {}", json.dumps({"rows": ["row_0007"]})),), 'get_row {"id": "row_0007"}', MCP,
                (json.dumps({"content": [{"type": "text", "text": "{\"id\": \"row_0001\"}"}], "isError": False}),)),
    "web": _turn("web", (("goto /", 'URL: http://shop.local/\nTitle: Shop\nFocused: none\n- heading "Shop"'),),
                "click e3", PAGE, ('URL: http://shop.local/p/1\nTitle: Lamp\nFocused: none\n- heading "Lamp"',)),
    "error": _turn("terminal", (("cd /srv", ""),), "cat /srv/secret.txt", ERROR, ("bash: foo: command not found",)),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", list(TURNS))
def test_each_adversary_scores_below_the_real_observation(kind, name):
    turn = TURNS[name]
    candidate = KINDS[kind](turn, random.Random(0))
    if candidate is None or candidate.strip() == turn.reference.strip():
        assert kind in ("previous_copied", "numbers_ids_paths_changed", "one_fact_altered") or name == "error"
        return
    judge = EmbeddedJudge()
    real = judge.judge(turn, turn.reference).scores.mean
    adversary = judge.judge(turn, candidate).scores.mean
    assert real == 5.0 and adversary < real, candidate


def test_the_kinds_do_what_they_say():
    rng = random.Random(0)
    made = adversaries(TURNS["terminal"], rng)
    assert made["previous_copied"] == ""  # the previous observation: touch printed nothing
    assert (
        made["empty"] == ""
        and "report.csv" in made["verbose_paraphrase"]
        and "/var/cache/" in made["verbose_paraphrase"]
    )
    assert made["outcome_flipped"].startswith("bash: ls: ")
    assert len(made["lines_dropped_or_shuffled"].splitlines()) < len(LISTING.splitlines())
    assert made["other_trajectory"] == TURNS["terminal"].others[0]
    assert sum(a != b for a, b in zip(made["one_fact_altered"], LISTING, strict=False)) <= 3
    assert made["numbers_ids_paths_changed"] != LISTING and len(made["numbers_ids_paths_changed"]) == len(LISTING)
    assert adversaries(TURNS["error"], rng)["outcome_flipped"] in (
        "Success",
        "Done.",
        "OK",
        "Operation completed successfully.",
    )
    assert json.loads(adversaries(TURNS["mcp"], rng)["outcome_flipped"])["isError"] is True


def test_no_adversary_equals_the_real_observation():
    rng = random.Random(1)
    for turn in TURNS.values():
        assert all(c.strip() != turn.reference.strip() for c in adversaries(turn, rng).values())
