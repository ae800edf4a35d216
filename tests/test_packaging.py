"""One import package: an install exposes `trajforge` alone, and a folder with packages named like our subpackages
(as research repositories often have) cannot shadow them."""

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = (
    "schemas", "endpoints", "sandboxes", "collectors", "masking", "curation", "pipelines", "training", "evaluation",
    "agents",
)  # fmt: skip


def _folder_with_lookalike_packages(tmp_path: Path) -> Path:
    for name in ("training", "evaluation", "schemas", "pipelines"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            f"raise ImportError('the user project\\'s own {name} was imported')\n"
        )
    return tmp_path


def test_the_cli_and_the_package_are_ours_from_a_folder_with_lookalike_packages(tmp_path):
    folder = _folder_with_lookalike_packages(tmp_path)
    bin_dir = Path(sys.executable).parent
    for argv in ([str(bin_dir / "trajforge"), "--help"], [sys.executable, "-m", "trajforge", "--help"]):
        result = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "collect" in result.stdout and "build-corpus" in result.stdout
    probe = "import trajforge.training, trajforge.evaluation, trajforge.schemas; print(trajforge.training.__file__)"
    result = subprocess.run([sys.executable, "-c", probe], cwd=folder, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).resolve() == ROOT / "training" / "__init__.py"


def test_the_package_list_names_every_subpackage():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        "trajforge." + ".".join(init.parent.relative_to(ROOT).parts)
        for top in SUBPACKAGES
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert on_disk | {"trajforge"} == set(config["packages"])
    assert {f"trajforge.{top}": top for top in SUBPACKAGES}.items() <= config["package-dir"].items()


@pytest.mark.slow
def test_the_wheel_installs_nothing_but_trajforge_at_the_top_level_and_builds_without_warnings(tmp_path):
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--verbose",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        timeout=300,
        capture_output=True,
        text=True,
    )
    # every data folder is declared as its package's data: setuptools sees no folder it takes for an undeclared package
    assert "is absent from the `packages` configuration" not in built.stdout + built.stderr
    (wheel,) = tmp_path.glob("trajforge-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert {top for top in top_level if not top.endswith(".dist-info")} == {"trajforge"}
    assert "trajforge/training/loop.py" in names and "trajforge/schemas/examples/chat.jsonl" in names
    assert "trajforge/collectors/suites/terminal.yaml" in names
