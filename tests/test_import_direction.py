"""The layers import one way, as ARCHITECTURE.md's table says: every import in every module of ours (each package
pyproject.toml maps, at module level or inside a function, relative imports resolved) goes to a layer that its own
layer may import. `trajforge.evaluation` in particular never imports `trajforge.training`."""

import ast
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BELOW_AGENTS = {"schemas", "endpoints", "masking", "curation", "evaluation", "sandboxes", "collectors", "training"}
# layer -> the layers it may import (its own always). The root package `trajforge` is `python -m trajforge`.
MAY_IMPORT: dict[str, set[str]] = {
    "schemas": set(),
    "endpoints": set(),
    "masking": {"schemas"},
    "curation": {"schemas"},
    "evaluation": {"schemas", "endpoints"},
    "sandboxes": {"schemas", "endpoints", "evaluation"},
    "collectors": {"schemas", "endpoints", "sandboxes"},
    "training": {"schemas", "endpoints", "evaluation"},
    "agents": BELOW_AGENTS,  # runs episodes (collectors) and updates weights (training)
    "pipelines": BELOW_AGENTS | {"agents"},
    "trajforge": {"pipelines"},
}


def package_dirs(root: Path) -> dict[str, Path]:
    """Top-level package name (`trajforge`, `trajforge.schemas`, ...) -> its folder, as pyproject.toml maps them."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return {name: root / folder for name, folder in mapping.items()}


def modules(packages: Mapping[str, Path]) -> Iterator[tuple[str, bool, Path]]:
    """(dotted module name, whether it is a package's __init__, file) for every .py file of every package."""
    for package, folder in packages.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if package == "trajforge" and len(parts) > 1:
                continue  # the root package's own modules only; its subpackages have their own folders
            is_init = parts[-1] == "__init__"
            yield ".".join((package, *parts[: -1 if is_init else None])), is_init, path


def imported_names(module: str, is_init: bool, source: str) -> Iterator[tuple[str, int]]:
    """(absolute module name, line) of every import in the source, wherever it stands."""
    package = module if is_init else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level > len(base):
                raise ValueError(f"{module}:{node.lineno}: a relative import above the top-level package")
            base = base[: len(base) - node.level + 1]
            yield ".".join([*base, node.module] if node.module else base), node.lineno


def layer_of(name: str, layers: set[str]) -> str | None:
    """The layer a dotted name of ours belongs to (`trajforge.training.rl` -> training, `trajforge.__main__` ->
    trajforge); None for a name that is not ours."""
    parts = name.split(".")
    if parts[0] != "trajforge":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in layers else "trajforge"


def wrong_imports(packages: Mapping[str, Path], may_import: Mapping[str, set[str]] = MAY_IMPORT) -> list[str]:
    """Every import that goes against the table, as "file:line: importer imports imported", and every package of
    ours that the table does not name."""
    layers = {name.split(".")[1] for name in packages if "." in name}
    problems = [
        f"trajforge.{layer}: a package the layer table does not name" for layer in sorted(layers - set(may_import))
    ]
    for module, is_init, path in modules(packages):
        importer = layer_of(module, layers)
        for name, line in imported_names(module, is_init, path.read_text()):
            imported = layer_of(name, layers)
            if imported not in (None, importer) and imported not in may_import.get(importer, set()):
                problems.append(f"{path}:{line}: {importer} imports {name}")
    return problems


def test_every_import_of_ours_follows_the_layer_table():
    packages = package_dirs(ROOT)
    assert {"trajforge.evaluation", "trajforge.training", "trajforge.schemas"} <= set(packages)
    assert sum(1 for _ in modules(packages)) > 100  # every module was read, not one folder
    problems = wrong_imports(packages)
    assert not problems, "\n".join(problems)


def test_the_table_names_every_top_level_package():
    assert {name.removeprefix("trajforge.") for name in package_dirs(ROOT)} == set(MAY_IMPORT)


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    folders = sorted({relative.split("/")[0] for relative in files} - {"trajforge"})
    return {"trajforge": tmp_path / "trajforge", **{f"trajforge.{folder}": tmp_path / folder for folder in folders}}


IN_A_FUNCTION = "from trajforge.schemas.names import X\n\n\ndef f():\n    import trajforge.training.rl\n"


def test_the_check_finds_a_wrong_import_inside_a_function_and_a_relative_one(tmp_path):
    packages = _tree(
        tmp_path,
        {
            "trajforge/__init__.py": "",
            "schemas/__init__.py": "from . import names\n",
            "schemas/names.py": "import json\n",
            "schemas/deep/__init__.py": "",
            "schemas/deep/rows.py": "from ...evaluation import judge\n",  # relative, out of schemas
            "evaluation/__init__.py": "",
            "evaluation/judge.py": IN_A_FUNCTION,
            "evaluation/run.py": "from .judge import f\nfrom trajforge.training import chat_models\n",
            "training/__init__.py": "",
            "training/rl.py": "from trajforge.evaluation.judge import f\nfrom ..schemas import names\n",  # allowed
        },
    )
    assert sorted(wrong_imports(packages)) == [
        f"{tmp_path / 'evaluation/judge.py'}:5: evaluation imports trajforge.training.rl",
        f"{tmp_path / 'evaluation/run.py'}:2: evaluation imports trajforge.training",
        f"{tmp_path / 'schemas/deep/rows.py'}:1: schemas imports trajforge.evaluation",
    ]
    unnamed = wrong_imports({**packages, "trajforge.planners": tmp_path / "planners"})
    assert unnamed[0] == "trajforge.planners: a package the layer table does not name" and len(unnamed) == 4


def declared_providers(packages: Mapping[str, Path]) -> Iterator[tuple[Path, int, str, str]]:
    """(file, line, declaring module, provider module) of every `REGISTRY.provided_by(name, "module")`: the imports
    of ours named by a string, which `imported_names` cannot see."""
    for module, _, path in modules(packages):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "provided_by":
                provider = node.args[1]
                assert isinstance(provider, ast.Constant), f"{path}:{node.lineno}: name the provider as a string"
                yield path, node.lineno, module, provider.value


def test_a_plug_in_named_by_its_module_comes_from_a_layer_above_its_registry():
    packages = package_dirs(ROOT)
    layers = {name.split(".")[1] for name in packages if "." in name}
    declared = list(declared_providers(packages))
    assert {provider for *_, provider in declared} >= {
        "trajforge.agents.checkpoint_policy",
        "trajforge.agents.world_model",
    }
    known = {module for module, _, _ in modules(packages)}
    for path, line, module, provider in declared:
        assert provider in known, f"{path}:{line}: no module {provider}"
        registry, plug_in = layer_of(module, layers), layer_of(provider, layers)
        assert registry in MAY_IMPORT[plug_in], f"{path}:{line}: {provider} may not import its registry's layer"
