"""benchmarks/results_record.py: one results file per run, holding what it takes to read and rerun the run."""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import results_record  # noqa: E402 - the benchmarks folder is a script folder, not a package


def test_a_run_writes_one_file_with_its_command_commit_machine_seeds_date_and_tables(tmp_path, capsys):
    args = argparse.Namespace(task_seed=7, seed=3, steps=2, results=str(tmp_path / "results"))
    record = results_record.start_record("toy-bench", args, ["--steps", "2"])
    print("| row | success |\n|---|---|\n| sft | 47.9% |")
    path = record.write({"success": 0.479})

    assert path.parent == tmp_path / "results" and path.name.startswith("toy-bench-")
    commit, _ = results_record.git_commit()
    assert path.name.endswith(f"-{results_record.short_commit()}.md")
    text = path.read_text()
    assert "- command: `" in text and "--steps 2`" in text
    assert f"- commit: `{commit}`" in text
    assert f"cpu_count {os.cpu_count()}" in text and "torch_device " in text
    assert "- seeds: seed 3, task_seed 7" in text
    assert "- date: 20" in text and " UTC" in text
    assert "| sft | 47.9% |" in text and '"success": 0.479' in text
    assert sys.stdout is not record._tee and "| sft | 47.9% |" in capsys.readouterr().out


def test_the_seeds_are_the_flags_named_as_seeds():
    assert results_record.seeds(argparse.Namespace(steps=1, rl_seed=2)) == {"rl_seed": 2}
    assert results_record.seeds(argparse.Namespace(steps=1)) == {}
