"""No two public classes of the package share a name: a name says one thing wherever it is imported. Every module
of every package is imported (one that cannot import fails the test: nothing is skipped but a module of an optional
extra where its library is not installed), and each class a module
defines (not one it imports) whose name does not start with "_" is counted once."""

import importlib
import importlib.util
import pkgutil
from collections import defaultdict

from tests.test_import_direction import MAY_IMPORT

# modules over a library of an optional extra (pyproject's `envs`), walked wherever it is installed (CI: `.[dev]`)
OPTIONAL_EXTRAS = {"trajforge.agents.openenv_env": "openenv", "trajforge.agents.verifiers_env": "verifiers"}


def _raise(name: str) -> None:
    raise ImportError(f"{name} cannot be imported")


def package_modules() -> list[str]:
    """Every module of `trajforge`: the root package and each layer's package with everything below it (walked
    layer by layer, since a source checkout's `trajforge.__path__` holds the whole repository)."""
    names = ["trajforge", "trajforge.__main__"]
    for layer in sorted(set(MAY_IMPORT) - {"trajforge"}):
        package = importlib.import_module(f"trajforge.{layer}")
        names.append(package.__name__)
        names += [module.name for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}.", _raise)]
    return [name for name in names if name not in OPTIONAL_EXTRAS or importlib.util.find_spec(OPTIONAL_EXTRAS[name])]


def classes_by_name(modules: list[str]) -> dict[str, set[str]]:
    """Public class name -> the modules that define a class of that name."""
    defined: dict[str, set[str]] = defaultdict(set)
    for name in modules:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, type) and value.__module__ == name and not value.__name__.startswith("_"):
                defined[value.__name__].add(name)
    return defined


def test_every_module_is_walked():
    modules = package_modules()
    assert len(modules) > 100 and "trajforge.sandboxes.servers.workspace" in modules
    assert {"trajforge.agents.agent_eval", "trajforge.collectors.families.workspace"} <= set(modules)


def test_no_two_modules_define_a_public_class_of_the_same_name():
    clashes = {
        name: sorted(modules) for name, modules in classes_by_name(package_modules()).items() if len(modules) > 1
    }
    assert not clashes, "\n".join(f"{name}: {', '.join(modules)}" for name, modules in sorted(clashes.items()))
