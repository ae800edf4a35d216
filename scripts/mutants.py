"""A curated mutation check: does the suite catch the bugs that matter?

    python scripts/mutants.py [--list] [--only NAME ...] [--no-baseline]      (make mutants)

Each mutant is one deliberate bug, written as a text replacement in one source file. The script copies the
working tree (tracked and untracked, not ignored files) to a temporary folder, runs the mutants' tests there
once unchanged (they must pass, or a "kill" would mean nothing), then applies one mutant at a time and runs
only the tests that should catch it: a failing run kills the mutant, a passing one lets it survive. A mutant
whose text is no longer in its file is reported `stale`: the code moved, update the list. Exit status 0 only
when every mutant is killed.

Not part of `make test` (it reruns tests once per mutant, minutes in all): run it after changing a guarded
invariant or the tests that protect it, and add a mutant for each new invariant worth protecting.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # the file to break, relative to the repository root
    old: str  # text that must occur exactly `count` times in the file; every occurrence is replaced
    new: str
    tests: tuple[str, ...]  # pytest node ids that must fail
    count: int = 1


MUTANTS = [
    Mutant(
        "trainer loss with the KV cache on (packed documents see each other)",
        "training/loop.py",
        "attention_mask=None, use_cache=False\n        ).logits",
        "attention_mask=None, use_cache=True\n        ).logits",
        ("tests/training/test_loop.py::test_trainer_and_held_out_losses_equal_each_document_alone",),
    ),
    Mutant(
        "trainer loss without per-document positions",
        "training/loop.py",
        'input_ids=batch["input_ids"], position_ids=batch["position_ids"], attention_mask=None',
        'input_ids=batch["input_ids"], position_ids=None, attention_mask=None',
        ("tests/training/test_loop.py::test_trainer_and_held_out_losses_equal_each_document_alone",),
    ),
    Mutant(
        "RL: GSPO loss sign flipped",
        "training/rl.py",
        "(out.loss * share * weight).backward()",
        "(-out.loss * share * weight).backward()",
        ("tests/training/test_rl.py::test_an_update_sharpens_with_snapshot_ratios_and_the_configured_clip",),
    ),
    Mutant(
        "RL: old log-probs from the current policy (ratio always 1)",
        "training/rl.py",
        "            logp,\n            old[rows],\n",
        "            logp,\n            logp.detach(),\n",
        ("tests/training/test_rl.py::test_an_update_sharpens_with_snapshot_ratios_and_the_configured_clip",),
    ),
    Mutant(
        "RL: configured epsilons ignored",
        "training/rl.py",
        "            gspo.eps_low,\n            gspo.eps_high,\n",
        "            GSPOConfig.eps_low,\n            GSPOConfig.eps_high,\n",
        ("tests/training/test_rl.py::test_an_update_sharpens_with_snapshot_ratios_and_the_configured_clip",),
    ),
    Mutant(
        "GSPO: PPO's clip range as the default",
        "training/configs.py",
        "EPS_LOW = 3e-4\nEPS_HIGH = 4e-4",
        "EPS_LOW = 0.2\nEPS_HIGH = 0.28",
        ("tests/training/test_gspo.py::test_the_readme_clip_range_is_the_default",),
    ),
    Mutant(
        "DDP wrapper removed (gradients never synced)",
        "training/loop.py",
        "wrapped = DistributedDataParallel(model) if world.size > 1 else model",
        "wrapped = model",
        ("tests/training/test_loop.py::test_two_ranks_end_equal_to_one_process_on_the_same_global_batch",),
    ),
    Mutant(
        "browser route guard opened",
        "sandboxes/browser.py",
        "elif _origin(url) not in self.origins:",
        "elif False:",
        ("tests/sandboxes/test_browser.py::test_clicks_redirects_and_subresources_to_another_origin_are_blocked",),
    ),
    Mutant(
        "browser follows redirects to another origin",
        "sandboxes/browser.py",
        "if response.status in (301, 302, 303, 307, 308) and _origin(target) not in self.origins:",
        "if False:",
        ("tests/sandboxes/test_browser.py::test_clicks_redirects_and_subresources_to_another_origin_are_blocked",),
    ),
    Mutant(
        "Google API keys not redacted",
        "curation/redaction.py",
        '("google_api_key", re.compile(r"\\bAIza',
        '("google_api_key", re.compile(r"\\bAIzaNEVER',
        (
            "tests/curation/test_redaction.py::test_each_kind_of_secret",
            "tests/pipelines/build_corpus/test_pipeline.py::test_every_kind_of_secret_is_redacted_in_the_shards",
        ),
    ),
    Mutant(
        "JWTs not redacted",
        "curation/redaction.py",
        '("jwt", re.compile(r"\\beyJ',
        '("jwt", re.compile(r"\\beyJNEVER',
        (
            "tests/curation/test_redaction.py::test_each_kind_of_secret",
            "tests/pipelines/build_corpus/test_pipeline.py::test_every_kind_of_secret_is_redacted_in_the_shards",
        ),
    ),
    Mutant(
        "build-corpus leaves an interrupted build's spill files behind",
        "pipelines/job.py",
        "storage.remove_tree(work_dir(output))",
        "pass",
        (
            "tests/pipelines/build_corpus/test_pipeline.py::test_a_build_killed_mid_write_reruns_to_a_clean_builds_bytes",
        ),
        count=2,
    ),
    Mutant(
        "AgentWorldBench extraction takes the first <predicted_observation> block",
        "evaluation/extraction.py",
        "start = visible.rfind(OPEN)",
        "start = visible.find(OPEN)",
        ("tests/evaluation/test_extraction.py::test_reasoning_is_dropped_and_the_last_block_wins",),
    ),
    Mutant(
        "judge calibration counts a tie as the judge ranking correctly",
        "evaluation/calibration.py",
        "correct = real.scores.mean > adversary.scores.mean",
        "correct = real.scores.mean >= adversary.scores.mean",
        ("tests/evaluation/test_calibration.py::test_judge_check_of_an_endpoint_judge",),
    ),
    Mutant(
        "serve: the API key is not checked",
        "training/serving.py",
        "if not hmac.compare_digest(given, self.expected):",
        "if False:",
        ("tests/training/test_serving.py::test_an_api_key_is_checked_on_every_request",),
    ),
    Mutant(
        "verifiers check volatile values (timestamps, pids, temp names)",
        "evaluation/volatile.py",
        "return VOLATILE.sub(PLACEHOLDER, text)",
        "return text",
        (
            "tests/evaluation/test_verifiers.py::test_volatile_values_are_masked",
            "tests/evaluation/test_verifiers.py::test_two_real_runs_pass_each_others_verifier",
        ),
    ),
    Mutant(
        "the split by trajectory instead of by task (a held-out task's other episodes train)",
        "schemas/splits.py",
        "return f\"task:{origin.split('#', 1)[0]}\"",
        "return f\"trajectory:{record['trajectory_id']}\"",
        (
            "tests/schemas/test_splits.py::test_collected_episodes_of_one_task_share_its_key",
            "tests/pipelines/test_split_flow.py::test_the_split_is_by_task_and_recorded",
        ),
    ),
    Mutant(
        "SFT reads held-out tasks",
        "schemas/splits.py",
        '"sft": ("train", "sft_rl"),',
        '"sft": ("train", "sft_rl", "held_out"),',
        ("tests/pipelines/test_split_flow.py::test_no_held_out_task_reaches_any_stage",),
    ),
    Mutant(
        "RL reads held-out tasks",
        "schemas/splits.py",
        '"rl": ("train", "sft_rl"),',
        '"rl": ("train", "sft_rl", "held_out"),',
        ("tests/pipelines/test_split_flow.py::test_no_held_out_task_reaches_any_stage",),
    ),
    Mutant(
        "SFT reads validation tasks (what choices read)",
        "schemas/splits.py",
        '"sft": ("train", "sft_rl"),',
        '"sft": ("train", "sft_rl", "validation"),',
        ("tests/schemas/test_dataset.py::test_the_training_split_and_the_two_held_out_parts_partition_the_corpus",),
    ),
    Mutant(
        "the split key is the suite's name and the task id again (one task in two suites drawn twice)",
        "collectors/tasks.py",
        "split_of_task(task_identity(task.instruction, task.files), task.family, config)",
        'split_of_task(f"task:{suite.name}/{task.id}", task.family, config)',
        ("tests/collectors/test_tasks.py::test_the_same_task_in_two_suites_lands_on_one_side_of_the_split",),
    ),
    Mutant(
        "MCP server containers on the host's network",
        "sandboxes/containers.py",
        "network_mode=NETWORKS[network],",
        'network_mode="host",',
        (
            "tests/sandboxes/test_mcp_container.py::"
            "test_a_hostile_server_driven_by_the_explorer_changes_nothing_on_the_host",
        ),
    ),
    Mutant(
        "chat-template labels: the end of turn never in the loss",
        "training/chat_format.py",
        "in_loss = len(end) if end_in_loss and end and text.startswith(end) else 0",
        "in_loss = 0",
        (
            "tests/training/test_chat_format.py::"
            "test_chat_template_labels_cover_exactly_the_in_loss_observation_characters",
        ),
    ),
    Mutant(
        "chat-template labels: an observation's text can fake a chat marker",
        "training/labels.py",
        "split_special_tokens=not match_special",
        "split_special_tokens=False",
        (
            "tests/training/test_labels.py::test_marker_text_inside_an_observation_is_text",
            "tests/training/test_chat_format.py::"
            "test_chat_template_labels_cover_exactly_the_in_loss_observation_characters",
        ),
    ),
    Mutant(
        "portable jobs: spill files on the worker's local disk, not the output's filesystem",
        "pipelines/shard_writing.py",
        "path = storage.join(work_dir(self.output), SPILL_DIR,",
        'path = storage.join(work_dir("."), SPILL_DIR,',
        ("tests/pipelines/test_job.py::test_s3_in_and_out_with_nothing_on_local_disk",),
    ),
    Mutant(
        "TensorBoard scalars logged one step late",
        "training/metrics_log.py",
        'global_step=int(metrics["step"])',
        'global_step=int(metrics["step"]) + 1',
        ("tests/training/test_metrics_log.py::test_rl_and_agent_rl_lines_read_back_the_same",),
    ),
    Mutant(
        "plot: the held-out loss drawn from the training loss",
        "pipelines/run_curves.py",
        '("eval_loss", "held-out")',
        '("loss", "held-out")',
        ("tests/pipelines/test_run_curves.py::test_masked_and_unmasked_runs_share_the_loss_panel_and_rl_gets_its_own",),
    ),
    Mutant(
        "simulated shell check: any predicted exit code passes",
        "sandboxes/simulated.py",
        "return code == 0",
        "return code is not None",
        ("tests/sandboxes/test_simulated.py::test_a_predicted_nonzero_or_missing_exit_code_fails_the_shell_check",),
    ),
    Mutant(
        "simulated check: an episode whose actions could change nothing is decided in the world model",
        "sandboxes/simulated.py",
        'unchanged = not any(could_change_state(t["action"]) for t in self._row["turns"])',
        "unchanged = False",
        (
            "tests/sandboxes/test_simulated.py::"
            "test_an_episode_that_could_change_nothing_is_decided_on_the_real_starting_state_without_asking",
        ),
    ),
    Mutant(
        "simulated environment: an answer with no observation in it is taken as one",
        "sandboxes/simulated.py",
        'return self.world_model.prompt == "plain" or prediction.tagged or not prediction.empty',
        "return True",
        (
            "tests/sandboxes/test_simulated.py::"
            "test_a_world_model_that_never_gives_an_observation_ends_every_episode_as_infra_error",
        ),
    ),
    Mutant(
        "real episodes record the reset's observation, not the starting state a simulation is given",
        "collectors/episode.py",
        'return initial if state is None else initial.model_copy(update={"content": state.render()})',
        "return initial",
        (
            "tests/collectors/test_grounding.py::"
            "test_what_setup_leaves_is_recorded_once_from_a_real_sandbox_and_matches_a_real_episode",
        ),
    ),
]


def copy_tree(destination: Path) -> None:
    """The working tree as it is (edits included), without ignored files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def run_tests(tree: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, float, str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    started = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, time.monotonic() - started, "timed out"
    return done.returncode, time.monotonic() - started, (done.stdout + done.stderr)[-2000:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print the mutants and their tests, run nothing")
    parser.add_argument("--only", nargs="*", help="run only the mutants whose name contains one of these")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run of the unmutated tests")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per test run (default 900)")
    args = parser.parse_args()
    mutants = [m for m in MUTANTS if not args.only or any(o.lower() in m.name.lower() for o in args.only)]
    if args.list or not mutants:
        for m in mutants:
            print(f"{m.name}\n    {m.path}\n    " + "\n    ".join(m.tests))
        return 0 if mutants else 2
    with tempfile.TemporaryDirectory(prefix="trajforge-mutants-") as tmp:
        tree = Path(tmp)
        copy_tree(tree)
        if not args.no_baseline:
            every = tuple(dict.fromkeys(t for m in mutants for t in m.tests))
            print(f"baseline: {len(every)} tests on the unmutated copy ...", flush=True)
            code, seconds, output = run_tests(tree, every, args.timeout)
            if code != 0:
                print(output, file=sys.stderr)
                print(f"baseline failed (exit {code}, {seconds:.0f}s): fix the tests before judging mutants")
                return 1
            print(f"baseline: passed in {seconds:.0f}s", flush=True)
        rows = []
        for i, m in enumerate(mutants, 1):
            path = tree / m.path
            original = path.read_text()
            if original.count(m.old) != m.count:
                rows.append((m, "stale", 0.0))
                print(f"[{i}/{len(mutants)}] {m.name}: stale ({m.old!r} found {original.count(m.old)}x)", flush=True)
                continue
            path.write_text(original.replace(m.old, m.new))
            try:
                code, seconds, output = run_tests(tree, m.tests, args.timeout)
            finally:
                path.write_text(original)
            verdict = {0: "SURVIVED", 1: "killed"}.get(code, f"error (exit {code})")
            if code not in (0, 1):
                print(output, file=sys.stderr)
            rows.append((m, verdict, seconds))
            print(f"[{i}/{len(mutants)}] {m.name}: {verdict} ({seconds:.0f}s)", flush=True)
    width = max(len(m.name) for m, _, _ in rows)
    print(f"\n| {'mutant':<{width}} | file | result | seconds |\n|{'-' * (width + 2)}|---|---|---|")
    for m, verdict, seconds in rows:
        print(f"| {m.name:<{width}} | {m.path} | {verdict} | {seconds:.0f} |")
    killed = sum(verdict == "killed" for _, verdict, _ in rows)
    print(f"\n{killed}/{len(rows)} mutants killed")
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
