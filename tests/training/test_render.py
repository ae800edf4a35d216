import json

import pytest

from trajforge.schemas.check_turn import check_turn, exit_code_command, file_turn
from trajforge.schemas.records import Action
from trajforge.schemas.system_prompt import render_system_prompt
from trajforge.training.chat_format import ASSISTANT, BEGIN, END, SYSTEM, USER
from trajforge.training.render import render_prompt, render_row


def cpt_turn(action: str, observation: str, spans: list[tuple[int, int]] | None, name: str | None = None) -> dict:
    """A CPT turn; spans=None means out of the loss."""
    return {
        "action": {"kind": "tool_call" if name else "shell", "name": name, "content": action},
        "observation": {"content": observation},
        "in_loss": spans is not None,
        "loss_spans": [{"start": s, "end": e} for s, e in spans or []],
    }


def cpt_row(*turns: dict) -> dict:
    return {
        "task_description": "Count the files.",
        "action_space": '[{"name": "shell"}]',
        "initial_state": "/work$",
        "demonstrations": "",
        "simulation_instruction": "Act as the terminal.",
        "turns": list(turns),
    }


MASKED = cpt_turn("echo hi", "hi\n", None)
HALF = cpt_turn("ls", "a.txt\nb.txt\nc.txt\n", [(0, 6), (12, 18)])
HEAD = cpt_turn("cat x", "one\ntwo\n", [(0, 4)])
WHOLE = cpt_turn('{"q": "x"}', "found it", [(0, 8)], name="search")


def in_loss(doc) -> list[str]:
    """The in-loss text as maximal runs."""
    runs, current = [], ""
    for char, flag in zip(doc.text, doc.loss_flags, strict=True):
        if flag:
            current += char
        elif current:
            runs.append(current)
            current = ""
    return runs + [current] if current else runs


def test_template_layout():
    row = cpt_row(MASKED, WHOLE)
    system = render_system_prompt(row)
    doc = render_row(row)
    assert doc.text == (
        f"{BEGIN}{SYSTEM}{system}{END}\n"
        f"{USER}echo hi{END}\n{ASSISTANT}hi\n{END}\n"
        f'{USER}search {{"q": "x"}}{END}\n{ASSISTANT}found it{END}\n'
    )
    assert system.startswith("# Task\nCount the files.")
    template = [doc.text[s:e] for s, e in doc.template_spans]
    assert template == [f"{BEGIN}{SYSTEM}"] + [f"{END}\n{USER}", f"{END}\n{ASSISTANT}"] * 2 + [f"{END}\n"]
    assert len(doc.loss_flags) == len(doc.text)


def test_masked_turn_contributes_nothing():
    doc = render_row(cpt_row(MASKED))
    assert not doc.loss_flags.any()


def test_whole_turn_and_its_end_marker_are_in_the_loss():
    doc = render_row(cpt_row(MASKED, WHOLE))
    assert in_loss(doc) == [f"found it{END}"]


def test_span_limited_turn_only_its_spans():
    doc = render_row(cpt_row(HALF))
    # the last span reaches the observation's end, so the end marker joins it
    assert in_loss(doc) == ["a.txt\n", f"c.txt\n{END}"]
    doc = render_row(cpt_row(HEAD))
    assert in_loss(doc) == ["one\n"]  # the tail is masked: no end marker


def test_empty_observation_kept_whole_trains_the_end_marker():
    doc = render_row(cpt_row(cpt_turn("true", "", [(0, 0)])))
    assert in_loss(doc) == [END]


def test_mask_mode_all_puts_every_observation_in_the_loss():
    doc = render_row(cpt_row(MASKED, HALF, HEAD, WHOLE), mask_mode="all")
    assert in_loss(doc) == [f"hi\n{END}", f"a.txt\nb.txt\nc.txt\n{END}", f"one\ntwo\n{END}", f"found it{END}"]


def test_row_without_masks_is_all_in_the_loss():
    row = cpt_row(cpt_turn("ls", "x y", None))
    for turn in row["turns"]:
        del turn["in_loss"], turn["loss_spans"]
    assert in_loss(render_row(row)) == [f"x y{END}"]


def test_marker_text_in_content_is_not_a_marker():
    observation = f"before {END} after"
    doc = render_row(cpt_row(cpt_turn("cat t", observation, [(0, len(observation))])))
    template = "".join(doc.text[s:e] for s, e in doc.template_spans)
    assert template.count(END) == 3  # system, user, assistant: not the one inside the observation
    assert in_loss(doc) == [f"before {END} after{END}"]


def test_loss_text_and_pieces_cover_the_text():
    doc = render_row(cpt_row(MASKED, HALF))
    assert doc.loss_text() == "".join(in_loss(doc))
    pieces = list(doc.pieces())
    assert "".join(doc.text[s:e] for s, e, _ in pieces) == doc.text
    assert [(s, e) for s, e, template in pieces if template] == list(doc.template_spans)


def test_prompt_is_the_document_up_to_the_observation():
    row = cpt_row(MASKED, WHOLE)
    prompt = render_prompt(row)
    assert prompt.text.endswith(ASSISTANT)
    assert render_row(row).text.startswith(prompt.text)
    assert not prompt.loss_flags.any()


def test_the_recorded_check_is_one_more_turn_whose_answer_is_learned():
    check = check_turn(Action(kind="shell", content=exit_code_command("test -f done")), "exit code: 1\n")
    row = cpt_row(MASKED) | {"outcome": {"status": "failure", "verifier": json.dumps(check)}}
    doc = render_row(row)
    assert doc.text.endswith(f'{USER}( test -f done ); echo "exit code: $?"{END}\n{ASSISTANT}exit code: 1\n{END}\n')
    assert in_loss(doc) == [f"exit code: 1\n{END}"]  # the episode's own turn stays masked
    assert render_row(cpt_row(MASKED)).text == doc.text[: doc.text.index(f"{USER}( test -f")]


def test_a_file_comparison_is_learned_as_the_files_read_alone_never_the_command_holding_the_expected_value():
    """The simulator asks `cat a.txt` right after the episode and compares the answer with 5 itself: the world model
    learns exactly that turn, and never sees the check's command (which holds 5) in training either."""
    command = 'test "$(cat a.txt)" = 5'
    check = check_turn(Action(kind="shell", content=exit_code_command(command)), "exit code: 1\n")
    verifier = json.dumps(check | file_turn("a.txt", "4\n"))
    row = cpt_row(MASKED) | {"outcome": {"status": "failure", "verifier": verifier}}
    doc = render_row(row)
    assert doc.text == render_row(cpt_row(MASKED)).text + f"{USER}cat a.txt{END}\n{ASSISTANT}4\n{END}\n"
    assert in_loss(doc) == [f"4\n{END}"] and command not in doc.text


def test_unknown_mask_mode():
    with pytest.raises(ValueError, match="mask_mode"):
        render_row(cpt_row(MASKED), mask_mode="none")
