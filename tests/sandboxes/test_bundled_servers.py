"""The bundled MCP servers are registered on the host; the servers themselves import nothing of trajforge."""

import ast
from pathlib import Path

import pytest

from trajforge.sandboxes.bundled_servers import PACKAGE_ROOT, SERVERS, bundled_server

SERVER_FOLDER = PACKAGE_ROOT / "sandboxes" / "servers"


def test_each_bundled_server_is_a_module_of_the_servers_folder_run_with_python_m():
    assert SERVERS.names() == ["workspace", "issues", "kvstore", "search"]
    for name in SERVERS:
        config = bundled_server(name, network="allow")
        assert config.args == ("-m", f"sandboxes.servers.{name}") and config.network == "allow"
        assert (SERVER_FOLDER / f"{name}.py").is_file()
        assert config.mounts == (str(SERVER_FOLDER.parent),) and config.python_path == (str(PACKAGE_ROOT),)


def test_an_unknown_server_is_refused_listing_the_bundled_ones():
    known = "^unknown bundled MCP server 'nope'; known: workspace, issues, kvstore, search$"
    with pytest.raises(ValueError, match=known):
        bundled_server("nope")


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}


def test_the_servers_folder_imports_only_what_its_container_has():
    for path in SERVER_FOLDER.glob("*.py"):
        roots = {name.split(".")[0] for name in _imported_modules(path)}
        assert not roots & {"trajforge", "sandboxes", "schemas"}, path.name
