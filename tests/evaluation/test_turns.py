from collections import Counter

from trajforge.evaluation.turns import TEMPLATES, corpus_turn, pick_template, turn_of_messages


def test_query_holds_history_and_the_action(corpus):
    row = corpus[0]
    query = corpus_turn(row, 2)
    roles = [role for role, _ in query.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert query.action.startswith("read_note ")  # the tool name travels with its arguments
    assert query.reference == row["turns"][2]["observation"]["content"]
    assert "<predicted_observation>" in query.messages[0][1]


def test_templates_are_diverse_and_deterministic():
    picks = Counter(pick_template(f"{i:032x}", i % 5) for i in range(400))
    assert set(picks) == set(range(len(TEMPLATES))) and min(picks.values()) > 50
    assert pick_template("ab" * 16, 3) == pick_template("ab" * 16, 3)


def test_a_plain_turn_keeps_the_system_prompt_and_drops_the_oldest_history_first(corpus):
    row = corpus[0]
    plain = corpus_turn(row, 2, plain=True)
    assert plain.template == -1 and "<predicted_observation>" not in plain.system
    assert plain.id == f"{row['trajectory_id']}:2" and len(plain.history) == 2
    first = len(plain.history[0][0]) + len(plain.history[0][1])
    short = corpus_turn(row, 2, plain=True, max_history_chars=sum(map(len, sum(plain.history, ()))) - first)
    assert short.history == plain.history[1:]


def test_an_rl_rows_messages_read_back_as_the_turn_they_ask(corpus):
    turn = corpus_turn(corpus[0], 2)
    stored = [{"role": r, "content": c} for r, c in turn.messages]  # as prepare-rl writes them
    back = turn_of_messages(turn.domain, stored, turn.reference)
    assert (back.system, back.history, back.action, back.reference) == (
        turn.system, turn.history, turn.action, turn.reference
    )  # fmt: skip
    assert turn_of_messages("mcp", [("user", "ls")], "a").messages == (("user", "ls"),)  # no system message
