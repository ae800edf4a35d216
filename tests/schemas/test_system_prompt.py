from hypothesis import given
from hypothesis import strategies as st

from trajforge.schemas.records import SYSTEM_PROMPT_PARTS
from trajforge.schemas.system_prompt import has_sections, parse_system_prompt, render_system_prompt


def test_render_skips_empty_parts():
    text = render_system_prompt({"task_description": "Do it.", "simulation_instruction": "Be a shell."})
    assert text == "# Task\nDo it.\n\n# Simulation instruction\nBe a shell."


def test_untagged_text_goes_to_one_part():
    parts = parse_system_prompt("You are a terminal.", untagged_part="simulation_instruction")
    assert parts["simulation_instruction"] == "You are a terminal."
    assert parts["task_description"] == ""
    assert not has_sections("You are a terminal.")


part_text = st.text(max_size=30).filter(lambda s: "\n#" not in s and not s.startswith("#"))


@given(st.fixed_dictionaries({p: part_text for p in SYSTEM_PROMPT_PARTS}))
def test_parse_inverts_render(parts):
    parts["action_space"] = parts["action_space"] or "[]"
    rendered = render_system_prompt(parts)
    if not rendered:
        return
    assert has_sections(rendered)
    assert parse_system_prompt(rendered) == parts
