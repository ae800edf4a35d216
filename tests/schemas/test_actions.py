import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trajforge.collectors.tasks import SUITES_DIR, load_suite
from trajforge.sandboxes.browser import ACTIONS as BROWSER_ACTIONS
from trajforge.schemas.actions import Act, Done, Unparseable, parse_action, payload_text, write_action
from trajforge.schemas.records import Action


def round_trip(action: Action, browser_actions=()) -> Action:
    answer = parse_action(write_action(action), browser_actions=browser_actions)
    assert isinstance(answer, Act | Done), answer
    return answer.action


def suite_actions():
    for path in sorted(SUITES_DIR.glob("*.yaml")):
        suite = load_suite(path.stem)
        browser = BROWSER_ACTIONS if suite.environment.kind == "browser" else ()
        for task in suite.tasks:
            for action in (*task.actions, *(s for s in task.setup if isinstance(s, Action))):
                yield suite.name, browser, action


def test_every_action_of_every_bundled_suite_round_trips():
    kinds = set()
    for suite, browser, action in suite_actions():
        assert round_trip(action, browser) == action, (suite, action)
        kinds.add(action.kind)
    assert kinds == {"shell", "keystrokes", "tool_call", "browser"}


def test_the_written_form_of_each_kind():
    assert write_action(Action(kind="shell", content="ls -la")) == "```bash\nls -la\n```"
    keys = Action(kind="keystrokes", content='{"keystrokes": "C-c", "duration": 0.5}')
    assert write_action(keys) == '```keys\n{"keystrokes": "C-c", "duration": 0.5}\n```'
    call = Action(kind="tool_call", name="read_file", content='{"path": "a.txt"}')
    assert write_action(call) == '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>'
    click = Action(kind="browser", name="click", content='{"ref": "e3"}')
    assert write_action(click) == '<tool_call>\n{"name": "click", "arguments": {"ref": "e3"}}\n</tool_call>'
    assert write_action(Action(kind="message", content="All done.")) == "All done."


def test_each_kind_round_trips():
    for action in (
        Action(kind="shell", content="cd /work && ls\n"),
        Action(kind="keystrokes", content='{"keystrokes": "vim a.txt\\n", "duration": 1.0}'),
        Action(kind="tool_call", name="search", content='{"query": "ünïcode", "k": 3}'),
        Action(kind="tool_call", name="list", content="{}"),
        Action(kind="browser", name="go_back", content="{}"),
        Action(kind="message", content="The file has 2 lines."),
    ):
        assert round_trip(action, BROWSER_ACTIONS) == action


def test_browser_actions_are_told_from_tool_calls_by_the_names_given():
    text = write_action(Action(kind="browser", name="click", content='{"ref": "e1"}'))
    assert parse_action(text, browser_actions={"click"}).action.kind == "browser"
    assert parse_action(text).action == Action(kind="tool_call", name="click", content='{"ref": "e1"}')


# --- what the naive format could not carry ---------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
pieces = ["`", "```", "\n", "\r", " ", "\t", "</tool_call>", "<tool_call>", "<think>", "</think>", "é", "🙂", "a", "{"]
tricky_text = st.lists(st.sampled_from(pieces) | st.characters(), max_size=20).map("".join)


@given(tricky_text)
def test_any_shell_command_round_trips(command):
    assert round_trip(Action(kind="shell", content=command)) == Action(kind="shell", content=command)


def test_a_command_holding_a_fence_gets_a_longer_fence():
    command = "cat <<'EOF' > README.md\n```bash\nmake\n```\nEOF"
    text = write_action(Action(kind="shell", content=command))
    assert text.startswith("````bash\n") and text.endswith("\n````")
    assert parse_action(text).action.content == command


@given(tricky_text, st.floats(min_value=0, max_value=60))
def test_any_keystrokes_round_trip(keys, duration):
    action = Action(kind="keystrokes", content=payload_text({"keystrokes": keys, "duration": duration}))
    assert round_trip(action) == action


@given(tricky_text.filter(bool), st.dictionaries(tricky_text, json_values, max_size=4))
def test_any_tool_call_round_trips(name, arguments):
    action = Action(kind="tool_call", name=name, content=payload_text(arguments))
    assert round_trip(action) == action
    assert write_action(action).count("</tool_call>") == 1  # "</" inside the JSON is written "<\/"


@given(tricky_text)
def test_plain_text_is_a_final_answer(text):
    if "```" in text or "<tool_call>" in text.lower() or text.lstrip().startswith("<think>"):
        return  # a message holding action syntax reads back as that action: plain text has no escape
    assert parse_action(write_action(Action(kind="message", content=text))) == Done(text)


def test_json_content_reads_back_in_canonical_form():
    action = Action(kind="tool_call", name="f", content='{"a":1,  "b" : "é"}')
    assert round_trip(action).content == '{"a": 1, "b": "é"}' == payload_text(json.loads(action.content))


# --- what models really write ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Let me look:\n```bash\nls -la\n```\nThen I will read it.",
        "```sh\nls -la\n```",
        "```shell  \nls -la\n```",
        "```Bash\r\nls -la\r\n```",
        "1. List the files:\n   ```bash\n   ls -la\n   ```",
        "<think>Maybe ```bash\nrm -rf /\n``` would help. No.</think>\n```bash\nls -la\n```",
    ],
)
def test_shell_blocks_as_models_write_them(text):
    assert parse_action(text) == Act(Action(kind="shell", content="ls -la" + ("\r" if "\r" in text else "")))


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>',
        'I will read it.\n<tool_call>\n  {"name": "read",\n   "arguments": {"path": "a"}}\n</tool_call>\n',
        '<tool_call>{"name": "read", "arguments": "{\\"path\\": \\"a\\"}"}</tool_call>',  # arguments as a string
        '<tool_call>\n{"name": "read", "arguments": {"path": "a"}}',  # the server cut the closing tag
    ],
)
def test_tool_calls_as_models_write_them(text):
    assert parse_action(text) == Act(Action(kind="tool_call", name="read", content='{"path": "a"}'))


def test_missing_or_null_arguments_are_none():
    for text in ('<tool_call>{"name": "go_back"}</tool_call>', '<tool_call>{"name": "go_back", "arguments": null}'):
        assert parse_action(text, browser_actions=BROWSER_ACTIONS) == Act(
            Action(kind="browser", name="go_back", content="{}")
        )


def test_several_actions_give_the_first_and_say_how_many_were_left():
    text = (
        '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>\n'
        "```bash\nls\n```"
    )
    assert parse_action(text) == Act(Action(kind="tool_call", name="a", content="{}"), ignored=2)


def test_answers_without_an_action_are_done():
    assert parse_action("The answer is 42.") == Done("The answer is 42.")
    assert parse_action("") == Done("")
    for prose in ("Here is the fix:\n```python\nprint(1)\n```", "Use `ls` or ```bash ls``` inline."):
        assert parse_action(prose) == Done(prose)
    assert parse_action("<think>It is 42.</think>\n\nThe answer is 42.") == Done("The answer is 42.")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("```bash\nls -la", "the ```bash block is not closed"),
        ("Run:\n```bash", "the ```bash block is not closed"),
        ("```keys\nls\n```", "the ```keys block must hold a JSON object"),
        ('<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>', "does not hold valid JSON"),
        ("<tool_call>", "does not hold valid JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', "with a non-empty name"),
        ('<tool_call>{"name": "", "arguments": {}}</tool_call>', "with a non-empty name"),
        ('<tool_call>["f", {}]</tool_call>', "with a non-empty name"),
        ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', "arguments of the tool call 'f' are not a JSON"),
        ('<tool_call>{"name": "f", "arguments": "a=1"}</tool_call>', "are not a JSON object"),
        ('<tool_call>{"name": "f"} and then</tool_call>', "followed by 'and then"),
    ],
)
def test_unparseable_answers_say_why(text, reason):
    answer = parse_action(text)
    assert isinstance(answer, Unparseable) and reason in answer.reason


def test_an_action_that_could_never_run_is_written_as_it_is_and_reads_back_unparseable():
    for action in (
        Action(kind="tool_call", name="f", content="not json"),
        Action(kind="tool_call", name=None, content="{}"),
        Action(kind="keystrokes", content="ls"),
    ):
        text = write_action(action)
        assert action.content in text or action.name is None
        assert isinstance(parse_action(text), Unparseable)
