"""Every command that talks to an OpenAI-compatible endpoint, against `trajforge serve --host 0.0.0.0 --api-key`
(a real process, reached at 127.0.0.1): with the key in the variable its `--<endpoint>-key-env` names, the endpoint
answers; without it, the command says which endpoint refused and which variable was not set.

The served model is the tiny checkpoint with a 64-token window, so every answer is short; it is no judge, so a
judge's request that got through reads "judge answer not parseable"; a judge refused for want of a key stops its
command at once, in one line."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.builders import make_trajectory
from tests.corpus_fixtures import corpus_trajectory
from tests.serve_process import serving
from trajforge.evaluation.endpoint import EndpointJudge
from trajforge.pipelines.build_corpus.config import BuildConfig
from trajforge.pipelines.build_corpus.pipeline import build_corpus
from trajforge.pipelines.cli import app
from trajforge.schemas.formats.agentworldbench import export_folder
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.splits import SplitConfig

pytestmark = pytest.mark.slow
runner = CliRunner()
KEY, VARIABLE = "k-3f9a61", "TEST_SERVE_KEY"  # the served key, and the variable the tests put it in
DEFAULT_VARIABLES = ("TRAJFORGE_AGENT_API_KEY", "TRAJFORGE_WORLD_MODEL_API_KEY",
                     "TRAJFORGE_GENERATOR_API_KEY", "TRAJFORGE_JUDGE_API_KEY")  # fmt: skip


@pytest.fixture(scope="module")
def url(tiny_checkpoint, tmp_path_factory):
    folder = tmp_path_factory.mktemp("short-window") / "tiny"
    shutil.copytree(tiny_checkpoint, folder)
    info = json.loads((folder / "checkpoint.json").read_text())
    (folder / "checkpoint.json").write_text(json.dumps({**info, "context_length": 64}))
    with serving(folder, flags=("--host", "0.0.0.0", "--api-key", KEY), key=KEY) as served:
        yield served


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    """A corpus of two trajectories, neither held out: two queries for curate-sft, two prompts for RL."""
    root = tmp_path_factory.mktemp("two-trajectories")
    write_segments([corpus_trajectory(k) for k in range(2)], root / "raw")
    build_corpus(
        [str(root / "raw")], root / "corpus", BuildConfig(split=SplitConfig(held_out=0.0, validation=0.0)), workers=1
    )
    return root / "corpus"


@pytest.fixture(autouse=True)
def environment(monkeypatch):
    """The key in VARIABLE; none of the default variables set."""
    monkeypatch.setenv(VARIABLE, KEY)
    for name in DEFAULT_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def refused(url: str) -> str:
    return f"the endpoint {url} (model tiny) refused the request: HTTP 401"


def not_set(variable: str) -> str:
    return f"no key was sent: ${variable} is not set"


def trajectories(run: Path) -> list[dict]:
    lines = [line for segment in sorted(run.glob("segment-*.jsonl")) for line in segment.read_text().splitlines()]
    return [json.loads(line) for line in lines]


def collect(tmp_path: Path, run: str, *flags: str):
    args = ["collect", "--suite", "terminal", "--task", "count-lines", "-o", str(tmp_path), "--run-id", run,
            "--max-turns", "1", "--retries", "0", *flags]  # fmt: skip
    return runner.invoke(app, args), trajectories(tmp_path / run)


def test_collect_simulate_sends_the_key(url, tmp_path):
    simulate = ["--world-model", f"{url}=tiny", "--simulate-prompt", "plain"]  # the tiny model is a CPT model
    result, (trajectory,) = collect(tmp_path, "keyed", *simulate, "--world-model-key-env", VARIABLE)
    assert result.exit_code == 0, result.output
    assert trajectory["source"]["kind"] == "simulated" and len(trajectory["turns"]) == 1
    result, (trajectory,) = collect(tmp_path, "keyless", *simulate)
    assert result.exit_code == 1 and trajectory["outcome"]["status"] == "infra_error"
    error = trajectory["outcome"]["error"]
    assert refused(url) in error and not_set("TRAJFORGE_WORLD_MODEL_API_KEY") in error


def test_collect_llm_policy_sends_the_key(url, tmp_path):
    llm = ["--agent", f"{url}=tiny", "--world-model", f"{url}=tiny", "--simulate-prompt", "plain",
           "--world-model-key-env", VARIABLE]  # fmt: skip
    result, (trajectory,) = collect(tmp_path, "keyed", *llm, "--agent-key-env", VARIABLE)
    assert result.exit_code == 0, result.output
    assert trajectory["outcome"]["status"] != "agent_error", trajectory["outcome"]
    result, (trajectory,) = collect(tmp_path, "keyless", *llm)
    assert trajectory["outcome"]["status"] == "agent_error"
    error = trajectory["outcome"]["error"]
    assert refused(url) in error and not_set("TRAJFORGE_AGENT_API_KEY") in error


def test_agent_eval_endpoint_sends_the_key(url, tmp_path, sandbox_image):
    def agent_eval(*flags: str) -> list[str]:
        """The outcome errors of the run's episodes."""
        args = ["agent-eval", "--agent", f"{url}=tiny", "--suite", "swe", "-o", str(tmp_path), "--report",
                str(tmp_path / "r.json"), "--image", sandbox_image, "--max-turns", "1", "--retries", "0",
                "--held-out", "0.3", *flags]  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        (agent,) = json.loads((tmp_path / "r.json").read_text())["agents"]
        return [e["outcome"].get("error") or "" for e in trajectories(Path(agent["run_dir"]))]

    keyed = agent_eval("--agent-key-env", VARIABLE)
    assert keyed and not any(refused(url) in error for error in keyed)
    keyless = agent_eval()
    assert keyless and all(refused(url) in e and not_set("TRAJFORGE_AGENT_API_KEY") in e for e in keyless)


def test_eval_endpoint_sends_the_key(url, tmp_path):
    export_folder([make_trajectory(1, domain="terminal")], tmp_path / "bench")
    args = ["eval", "--world-model", f"{url}=tiny", "--agentworldbench", str(tmp_path / "bench"), "--max-new-tokens",
            "8"]  # fmt: skip
    result = runner.invoke(app, [*args, "--world-model-key-env", VARIABLE, "--report", str(tmp_path / "keyed.json")])
    assert result.exit_code == 0, result.output
    report, copy_previous = json.loads((tmp_path / "keyed.json").read_text())  # no corpus here: no retrieval row
    assert copy_previous["model"] == "copy previous (model-free)"
    assert report["scored"] == 1 and report["unanswered"] == 0
    result = runner.invoke(app, [*args, "--report", str(tmp_path / "keyless.json")])
    report, _ = json.loads((tmp_path / "keyless.json").read_text())
    assert report["unanswered"] == 1 and report["scored"] == 1 and report["excluded"] == {}  # a miss, scored
    assert f"endpoint:tiny: no answer ({refused(url)}" in result.output
    assert not_set("TRAJFORGE_WORLD_MODEL_API_KEY") in result.output


def test_curate_sft_generator_sends_the_key(url, tmp_path, small_corpus):
    args = ["curate-sft", "-i", str(small_corpus), "--generator", "endpoint", "--generator-url", url,
            "--generator-model", "tiny", "--candidates", "1", "--per-trajectory", "1", "--max-new-tokens", "8",
            "--workers", "1"]  # fmt: skip
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "keyed"), "--generator-key-env", VARIABLE])
    assert result.exit_code == 0, result.output
    scores = (tmp_path / "keyed" / "_scores.jsonl").read_text().splitlines()
    assert scores and all(json.loads(s)["origins"] == ["rollout"] for s in scores)
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "keyless")])
    assert result.exit_code == 2 and "curate-sft: the Beam job failed" in result.output
    assert refused(url) in result.output and not_set("TRAJFORGE_GENERATOR_API_KEY") in result.output


@pytest.fixture
def judge_failures(monkeypatch) -> list[str | None]:
    """The failure of every endpoint judgement made in this process (None for one with scores)."""
    seen: list[str | None] = []
    real = EndpointJudge.judge

    def judge(self, turn, prediction):
        judgement = real(self, turn, prediction)
        seen.append(judgement.failure)
        return judgement

    monkeypatch.setattr(EndpointJudge, "judge", judge)
    return seen


def assert_reached_the_model(failures: list[str | None]) -> None:
    """The judge's requests got through: the served model answered (though not as a judge)."""
    assert failures and all(f.startswith("judge answer not parseable") for f in failures), failures


def assert_refused_without_a_key(result, url: str) -> None:
    """The command stopped at the first judgement, in one line naming the endpoint and the unset variable."""
    output = " ".join(result.output.split())  # as wrapped on the console
    assert result.exit_code == 2, result.output
    assert refused(url) in output and not_set("TRAJFORGE_JUDGE_API_KEY") in output


def judge_flags(url: str) -> list[str]:
    return ["--judge", "endpoint", "--judge-url", url, "--judge-model", "tiny"]


def test_curate_sft_judge_sends_the_key(url, tmp_path, small_corpus, judge_failures):
    args = ["curate-sft", "-i", str(small_corpus), "--candidates", "1", "--per-trajectory", "1", "--workers", "1",
            *judge_flags(url)]  # fmt: skip
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "keyed"), "--judge-key-env", VARIABLE])
    assert result.exit_code == 0, result.output
    assert_reached_the_model(judge_failures)
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "keyless")])
    assert_refused_without_a_key(result, url)
    assert "curate-sft: the Beam job failed" in result.output


def test_judge_check_sends_the_key(url, small_corpus, judge_failures):
    args = ["judge-check", "--corpus", str(small_corpus), "--limit", "1", *judge_flags(url)]
    result = runner.invoke(app, [*args, "--judge-key-env", VARIABLE])
    assert result.exit_code == 0, result.output
    assert_reached_the_model(judge_failures)
    assert_refused_without_a_key(runner.invoke(app, args), url)


def test_train_rl_judge_sends_the_key(url, tmp_path, small_corpus, tiny_checkpoint, judge_failures, monkeypatch):
    from trajforge.training import rl

    real_rollout = rl.rollout

    def tagged_rollout(*args, **kwargs):  # an untrained policy's answer is judged only in the answer format
        ids, mask, texts = real_rollout(*args, **kwargs)
        return ids, mask, [f"<predicted_observation>{t}</predicted_observation>" for t in texts]

    monkeypatch.setattr(rl, "rollout", tagged_rollout)
    data = tmp_path / "rl"
    assert runner.invoke(app, ["prepare-rl", "-i", str(small_corpus), "-o", str(data), "--workers", "1"]).exit_code == 0
    args = ["train", "rl", "--data", str(data), "--init", str(tiny_checkpoint), "--max-steps", "1",
            "--max-new-tokens", "4", "--group-size", "2", "--prompts-per-step", "1", *judge_flags(url)]  # fmt: skip
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "keyed"), "--judge-key-env", VARIABLE])
    assert result.exit_code == 0, result.output
    assert_reached_the_model(judge_failures)
    assert_refused_without_a_key(runner.invoke(app, [*args, "-o", str(tmp_path / "keyless")]), url)
