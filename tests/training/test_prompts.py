from collections import Counter

from trajforge.training.prompts import TEMPLATES, build_query, pick_template


def test_query_holds_history_and_the_action(corpus):
    row = corpus[0]
    query = build_query(row, 2)
    roles = [role for role, _ in query.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert query.action.startswith("read_note ")  # the tool name travels with its arguments
    assert query.reference == row["turns"][2]["observation"]["content"]
    assert "<predicted_observation>" in query.messages[0][1]


def test_templates_are_diverse_and_deterministic():
    picks = Counter(pick_template(f"{i:032x}", i % 5) for i in range(400))
    assert set(picks) == set(range(len(TEMPLATES))) and min(picks.values()) > 50
    assert pick_template("ab" * 16, 3) == pick_template("ab" * 16, 3)
