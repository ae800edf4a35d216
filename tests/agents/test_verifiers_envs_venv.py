"""verifiers 0.4 cannot live in trajforge's own venv (it pins mcp==2.0.0; trajforge's MCP servers run a later mcp),
so `make test` installs the `envs` extra in a venv of its own over the main one (`make envs-venv`,
scripts/envs-venv.sh) and this test runs the verifiers adapter's tests (test_verifiers_env.py: verifiers' own
rollout code, a Docker terminal and a world model) there, in a pytest of their own. verifiers builds its chat
program's environment with uv at its first episode, from PyPI (62 MB, then cached in uv's cache)."""

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
ENVS_PYTHON = REPOSITORY / os.environ.get("ENVS_VENV", ".venv-envs") / "bin" / "python"


@pytest.mark.slow
def test_the_verifiers_adapter_passes_its_tests_in_the_envs_venv():
    if importlib.util.find_spec("verifiers") is not None:
        pytest.skip("verifiers is installed in this venv: test_verifiers_env.py runs here directly")
    if not ENVS_PYTHON.exists():
        pytest.skip(f"no envs venv at {ENVS_PYTHON.parent.parent}: `make envs-venv` builds it (`make test` does)")
    tests = REPOSITORY / "tests" / "agents" / "test_verifiers_env.py"
    ran = subprocess.run(
        [str(ENVS_PYTHON), "-m", "pytest", str(tests), "-q", "-rs", "-p", "no:cacheprovider"],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PATH": f"{ENVS_PYTHON.parent}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip
    said = ran.stdout[-3000:] + ran.stderr[-2000:]
    assert ran.returncode == 0, said
    summary = ran.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary and "failed" not in summary, said
