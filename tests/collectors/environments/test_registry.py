"""Every module of collectors/environments is a kind; `EnvironmentSpec` is their union, told apart by `kind`."""

import pytest

from trajforge.collectors.environments import KINDS, parse_environment
from trajforge.collectors.environments.terminal import TerminalSpec


def test_each_bundled_kind_is_registered_and_parsed_by_its_name():
    assert {"terminal", "mcp", "browser", "simulated"} <= set(KINDS)
    for name, spec in KINDS.items():
        assert spec.model_fields["kind"].default == name
    assert parse_environment({}) == TerminalSpec()  # a suite without `kind` runs in the terminal


def test_an_unknown_kind_or_a_field_of_another_kind_is_refused_naming_the_file():
    with pytest.raises(ValueError, match="s.yaml: environment: .*'moon'.*expected tags: .*'browser'.*'terminal'"):
        parse_environment({"kind": "moon"}, "s.yaml: environment")
    with pytest.raises(ValueError, match=r"s.yaml: environment: terminal.app: Extra inputs are not permitted"):
        parse_environment({"kind": "terminal", "app": "shop"}, "s.yaml: environment")
    with pytest.raises(ValueError, match=r"browser.app: Field required"):
        parse_environment({"kind": "browser"}, "s.yaml: environment")


def test_a_terminal_suite_may_offer_only_the_shell():
    spec = parse_environment({"kind": "terminal", "tools": ["shell"]}, "s.yaml: environment")
    assert [tool["name"] for tool in spec.simulated_action_space()] == ["shell"]
    assert [tool["name"] for tool in TerminalSpec().simulated_action_space()] == ["shell", "keystrokes"]
    with pytest.raises(ValueError, match=r"s.yaml: environment: terminal.tools\[0\]: Input should be 'shell' or"):
        parse_environment({"kind": "terminal", "tools": ["mouse"]}, "s.yaml: environment")
