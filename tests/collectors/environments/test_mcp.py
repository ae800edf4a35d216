"""The MCP kind's suite spec: checked when the suite loads, and what the manifest records of its isolation."""

import pytest

from trajforge.collectors.environments import parse_environment
from trajforge.collectors.environments.mcp import MCPSpec


def mcp_policy(environment: dict) -> dict:
    return parse_environment(environment).manifest_policy()


def test_the_manifest_policy_of_each_kind_of_server():
    assert mcp_policy({"kind": "mcp", "server": "issues"}) == {
        "transport": "stdio",
        "isolation": "container",
        "network": "none",
    }
    assert mcp_policy({"kind": "mcp", "command": "npx", "args": ["-y", "x"], "network": "allow"})["network"] == "allow"
    assert mcp_policy({"kind": "mcp", "url": "https://api.example.com:8443/mcp"}) == {
        "transport": "http",
        "isolation": "none (remote)",
        "url_host": "api.example.com",
    }


def test_a_spec_that_names_no_usable_server_is_refused_where_it_is_written():
    for bad, problem in (
        ({"kind": "mcp"}, "give exactly one of `command` (stdio) or `url` (HTTP)"),
        ({"kind": "mcp", "server": "nope"}, "unknown bundled MCP server 'nope'; known: workspace, issues, kvstore, "),
        ({"kind": "mcp", "server": "kvstore", "isolation": "vm"}, "isolation: Input should be 'container' or 'host'"),
    ):
        with pytest.raises(ValueError, match="^suite.yaml: environment") as error:
            parse_environment(bad, "suite.yaml: environment")
        assert problem in str(error.value)
    assert isinstance(parse_environment({"kind": "mcp", "server": "kvstore"}), MCPSpec)
