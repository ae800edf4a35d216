"""benchmarks/sim_rl.py's table, fidelity figures and reading against issue 22's targets, on synthetic agent-eval
and sim-check results (the benchmark itself drives real Docker; `make sim-demo` runs it)."""

import argparse
import json
import sys
from pathlib import Path

import pytest

from trajforge.evaluation.intervals import wilson_interval

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import sim_rl  # noqa: E402 - the benchmarks folder is a script folder, not a package

NAMES = [sim_rl.SCRIPTED, sim_rl.SFT, sim_rl.REAL_RL, sim_rl.SIM_RL, sim_rl.CONTROLLED_RL]
TASKS = 100


def report(name: str, solved: int | tuple[int, int], tasks: int = TASKS) -> dict:
    """A greedy agent-eval report of `name` on `tasks` test tasks: it solved `solved` of them, the first ones, or
    for (count, first) `count` tasks from the `first`-th on (how two rows' successes overlap sets the pairing)."""
    count, first = solved if isinstance(solved, tuple) else (solved, 0)
    outcomes = {f"task-{i:03d}": [int(first <= i < first + count)] for i in range(tasks)}
    overall = {"scored": tasks, "successes": count, "success_rate": count / tasks,
               "interval": list(wilson_interval(count, tasks)), "mean_turns": 2.0, "unparseable_rate": 0.0}  # fmt: skip
    return {"agent": name, "model_free": name == sim_rl.SCRIPTED, "overall": overall, "outcomes": outcomes}


def reports(solved: list) -> dict[str, list[dict]]:
    """Row -> its reports, in NAMES' order: each entry a report's `solved`, or a list of them (one per seed)."""
    return {name: [report(name, s) for s in (row if isinstance(row, list) else [row])]
            for name, row in zip(NAMES, solved, strict=True)}  # fmt: skip


def rows(clean: list, faulty: list, seeds: list[int] | None = None) -> dict[str, dict]:
    seeds = seeds or [0]
    table = sim_rl.table(reports(clean), reports(faulty), seeds)
    return {r["row"]: r for r in table}


def checked(exact: float, factuality: float, agreement: float, produced: float) -> dict:
    step = {"wm": {"turns": 50, "exact_match": exact, "judge_factuality": factuality},
            "copy previous (model-free)": {"turns": 50, "exact_match": 0.4, "judge_factuality": 20.0},
            "retrieval (model-free)": {"turns": 50, "exact_match": 0.5, "judge_factuality": 30.0}}  # fmt: skip
    episodes = {"success": {"all": {"agreement": agreement}}, "wm2real": {"all": {"exact_match": 0.7}},
                "controllability": {"all": {"produced_share": produced, "clean_share": 0.95}}}  # fmt: skip
    return {"world_model": "wm", "single_step": {"terminal/terminal-text": step, "all": step}, "episodes": episodes}


def terminal(argv: list[str]) -> argparse.Namespace:
    """The benchmark's arguments for its terminal family's run."""
    return sim_rl.family_arguments(sim_rl.arguments(argv), "terminal")


def by_target(found: list[dict]) -> dict[str, dict]:
    return {t["target"].split(":")[0].split(" >=")[0]: t for t in found}


def test_a_run_that_meets_every_target_says_so():
    table = rows(clean=[100, 40, 70, 60, 70], faulty=[90, 20, 40, 25, 50])
    found = sim_rl.targets(table, sim_rl.fidelity(checked(0.85, 60.0, 0.9, 0.95)))
    assert all(t["met"] is True for t in found)
    gain = by_target(found)["RL in the simulator raises real success over agent SFT by"]
    assert gain["figure"] == pytest.approx(30) and gain["paired"]["low"] >= 0.10  # the whole interval above +10
    share = by_target(found)["RL in the simulator gains"]
    assert share["figure"] == pytest.approx(1.0) and share["margin"]["low"] > 0  # 30 - 0.8 x 30 points, above 0
    said = sim_rl.reading(found, [0])
    assert said.startswith(f"{len(found)} of {len(found)} targets met; the RL rows trained with one seed (0)")
    assert "by >= 10 points: met: +30.0 points [" in said
    assert "(paired, 100 tasks) on the same test tasks; the whole 95% interval is at or above +10 points" in said
    assert "exact match 85% beats the best baseline's 50%; factuality 60.0 beats the best baseline's 30.0" in said


def test_missed_targets_are_said_plainly_with_their_paired_figures():
    table = rows(clean=[100, 40, 70, 60, 42], faulty=[90, 20, 40, 30, 32])
    found = sim_rl.targets(table, sim_rl.fidelity(checked(0.5, 25.0, 0.6, 0.3)))
    met = {t["target"]: t["met"] for t in found}
    assert not any(met.values()) and None not in met.values()  # each NOT met, none left undecided
    text = sim_rl.reading(found, [0])
    assert text.startswith(f"0 of {len(found)} targets met; the RL rows trained with one seed (0): each RL figure is ")
    assert text.count("NOT met") == len(found)
    assert "by >= 10 points: NOT met: +2.0 points [" in text and "the whole 95% interval is below +10 points" in text
    assert "7% of real RL's gain (the ratio of the means" in text and "lies below 0" in text
    assert "(30%)" in text and "(50%)" in text
    assert "exact match 50% does not beat the best baseline's 50%; factuality 25.0 does not beat" in text


def test_a_gain_of_12_points_whose_paired_interval_reaches_below_10_is_not_called_met():
    """Today's reading called +12 points met (12 >= 10, the overlap of two unpaired intervals only a remark): here
    the agents share few successes, so the paired interval reaches both sides of +10 and the reading cannot tell."""
    table = rows(clean=[100, 40, 40, 52, (52, 30)], faulty=[90, 20, 20, 20, 31])
    found = by_target(sim_rl.targets(table, sim_rl.fidelity(checked(0.85, 60.0, 0.9, 0.95))))
    gain = found["RL in the simulator raises real success over agent SFT by"]
    assert gain["figure"] == pytest.approx(12) and gain["met"] is None
    assert gain["paired"]["low"] < 0.10 <= gain["paired"]["high"]
    text = sim_rl.reading(list(found.values()), [0])
    assert "by >= 10 points: cannot tell from this run: +12.0 points [" in text
    assert "the 95% interval reaches both sides of +10 points" in text


def test_the_share_of_real_rls_gain_cannot_be_told_while_real_rls_gain_holds_zero():
    """Real RL +4 points over agent SFT, its paired interval holding zero: today's reading took the share (+25 over
    +4: met); there is no gain to take a share of, and the reading says so with both differences."""
    table = rows(clean=[100, 40, (44, 10), 60, 65], faulty=[90, 20, 40, 25, 50])
    found = by_target(sim_rl.targets(table, sim_rl.fidelity(checked(0.85, 60.0, 0.9, 0.95))))
    share = found["RL in the simulator gains"]
    assert share["real_gain"]["low"] <= 0 < share["real_gain"]["difference"] and share["met"] is None
    assert share["figure"] is None and share["sim_gain"]["difference"] == pytest.approx(0.25)
    text = sim_rl.reading(list(found.values()), [0])
    undecided = "gains: cannot tell from this run (RL in the real environment's gain over agent SFT, +4.0 points ["
    assert undecided in text
    assert "holds zero: there is no gain to take a share of; RL in the simulator's: +25.0 points [" in text
    worse = rows(clean=[100, 40, 20, 60, 65], faulty=[90, 20, 40, 25, 50])  # real RL lost 20 points
    fid = sim_rl.fidelity(checked(0.85, 60.0, 0.9, 0.95))
    lost = by_target(sim_rl.targets(worse, fid))["RL in the simulator gains"]
    assert lost["met"] is None and "lies below zero: there is no gain to take a share of" in lost["undecided_because"]


def test_three_seeds_give_each_rl_row_its_mean_and_spread_and_pool_the_paired_difference(capsys):
    """Each RL row trained at three seeds: the table shows the mean over the seeds and their min-max and sd, and
    the difference from agent SFT pairs each task's three RL outcomes with agent SFT's one (a task one cluster)."""
    table = rows(clean=[100, 40, [60, 70, 80], [40, 45, 50], [60, 65, 70]], faulty=[90, 20, [30] * 3, [20] * 3,
                 [40, 45, 50]], seeds=[0, 1, 2])  # fmt: skip
    real = table[sim_rl.REAL_RL]
    assert real["seeds"] == [0, 1, 2] and table[sim_rl.SFT]["seeds"] is None
    assert real["clean"]["success_rate"] == pytest.approx(0.7) and real["clean"]["per_seed"] == [0.6, 0.7, 0.8]
    assert real["clean"]["spread"] == {"min": 0.6, "max": 0.8, "sd": pytest.approx(0.1)}
    versus = real["vs_sft"]["clean"]
    assert versus["n"] == 300 and versus["tasks"] == 100 and versus["difference"] == pytest.approx(0.3)
    assert "bootstrap over clusters" in versus["method"] and "(paired, 300 samples of 100 tasks" in versus["describe"]
    found = sim_rl.targets(table, sim_rl.fidelity(checked(0.85, 60.0, 0.9, 0.95)))
    said = sim_rl.reading(found, [0, 1, 2])
    assert "the RL rows trained with 3 seeds (0, 1, 2): each RL figure pools them" in said and "one seed" not in said
    sim_rl.print_table(list(table.values()), sim_rl.fidelity(checked(0.85, 60.0, 0.9, 0.95)))
    printed = capsys.readouterr().out
    real_line = next(line for line in printed.splitlines() if line.startswith(sim_rl.REAL_RL))
    assert " 70% mean, 3 seeds 60%-80% sd 10.0 210/300" in real_line
    assert f"  {sim_rl.REAL_RL:<40} clean +30.0 points [" in printed


def test_controlled_and_uncontrolled_rows_pair_seed_with_seed():
    """Two RL rows of the same seeds: each seed's outcomes against the same seed's, never crossed."""
    sft = [{"a": [0], "b": [0]}]
    first = [{"a": [1], "b": [0]}, {"a": [0], "b": [1]}]
    second = [{"a": [1], "b": [1]}, {"a": [0], "b": [0]}]
    ours, theirs, base = sim_rl.aligned(first, second, sft)
    assert ours == {"a": [1, 0], "b": [0, 1]} and theirs == {"a": [1, 0], "b": [1, 0]}
    assert base == {"a": [0, 0], "b": [0, 0]}  # one seed stands beside each of the others
    with pytest.raises(ValueError):
        sim_rl.aligned(first, [{"a": [1]}] * 3)


def test_the_table_keeps_both_conditions_and_prints_them(capsys):
    table = rows(clean=[100, 40, 70, 60, 65], faulty=[90, 20, 40, 25, 50])
    assert table[sim_rl.CONTROLLED_RL]["faults"]["successes"] == 50 and table[sim_rl.SCRIPTED]["model_free"]
    assert table[sim_rl.SFT]["clean"]["interval"] == list(wilson_interval(40, 100))
    fid = sim_rl.fidelity(checked(0.85, 60.0, 0.9, 0.95))
    sim_rl.print_table(list(table.values()), fid)
    printed = capsys.readouterr().out
    assert f"{sim_rl.CONTROLLED_RL}" in printed and " 65% [" in printed and " 50% [" in printed
    assert "exact 85%" in printed and "retrieval (model-free): exact 50%" in printed
    assert f"  {sim_rl.CONTROLLED_RL:<40} clean +25.0 points [" in printed and "(paired, 100 tasks)" in printed


def test_controllability_reports_its_interval_tasks_and_denominator_and_decides_by_the_interval(capsys):
    result = checked(0.85, 60.0, 0.9, 0.93)
    result["episodes"]["controllability"]["all"] |= {"produced_interval": [0.85, 0.97], "instructed_faults": 97,
                                                     "tasks": 24}  # fmt: skip
    fid = sim_rl.fidelity(result)
    table = rows([100, 40, 70, 60, 70], [90, 20, 40, 25, 50])
    control = by_target(sim_rl.targets(table, fid))["controllability"]
    assert control["met"] is None  # 93%, but [85%, 97%] reaches below 90%
    said = sim_rl.reading(sim_rl.targets(table, fid), [0])
    assert "cannot tell from this run (93% [85%, 97%] of 97 instructed faults over 24 tasks; the denominator is " in (
        said
    )
    sim_rl.print_table(list(table.values()), fid)
    assert "instructed faults produced 93% [85%, 97%] of 97 instructed (the denominator: every instructed fault) " in (
        capsys.readouterr().out
    )


def test_a_simulator_without_episode_figures_leaves_those_targets_undecided():
    result = checked(0.85, 60.0, 0.9, 0.95)
    del result["episodes"]
    found = by_target(sim_rl.targets(rows([100, 40, 70, 60, 65], [90, 20, 40, 25, 50]), sim_rl.fidelity(result)))
    assert found["success agreement"]["met"] is None and found["controllability"]["met"] is None


def test_controlled_episodes_that_reached_no_fault_leave_controllability_undecided_and_say_so():
    result = checked(0.85, 60.0, 0.9, 0.95)
    result["episodes"]["controllability"]["all"] = {"instructed_faults": 0, "produced_share": None}
    found = sim_rl.targets(rows([100, 40, 70, 60, 65], [90, 20, 40, 25, 50]), sim_rl.fidelity(result))
    assert by_target(found)["controllability"]["met"] is None
    assert "cannot tell from this run (sim-check's controlled episodes reached no instructed fault)" in (
        sim_rl.reading(found, [0])
    )


def outcomes(real_successes: int, real_failures: int) -> dict:
    return {"success": real_successes, "failure": real_failures}


def test_agreement_over_real_episodes_that_all_failed_decides_nothing_and_the_reading_says_why(capsys):
    result = checked(0.85, 60.0, 1.0, 0.95)
    result["episodes"]["success"]["all"]["real_outcomes"] = outcomes(0, 14)
    fid = sim_rl.fidelity(result)
    assert fid["real_outcomes"] == {"success": 0, "failure": 14}
    found = sim_rl.targets(rows([100, 40, 70, 60, 65], [90, 20, 40, 25, 50]), fid)
    agreement = by_target(found)["success agreement"]
    assert agreement["met"] is None and agreement["figure"] == 1.0
    said = sim_rl.reading(found, [0])
    assert "success agreement >= 85%: cannot tell from this run (100%) (the agent's real episodes all failed" in said
    sim_rl.print_table(list(rows([100, 40, 70, 60, 65], [90, 20, 40, 25, 50]).values()), fid)
    assert "real: 0 successes, 14 failures" in capsys.readouterr().out


def test_agreement_over_both_outcomes_is_judged_under_the_rule_the_rows_use():
    result = checked(0.85, 60.0, 0.6, 0.95)
    result["episodes"]["success"]["all"]["real_outcomes"] = outcomes(0, 14)
    result["episodes"]["success"]["all"]["by_exit_code"] = {"agreement": 0.9, "real_outcomes": outcomes(2, 18)}
    fid = sim_rl.fidelity(result, "exit-code")
    assert fid["real_outcomes"] == {"success": 2, "failure": 18}
    agreement = by_target(sim_rl.targets(rows([100, 40, 70, 60, 65], [90, 20, 40, 25, 50]), fid))
    assert agreement["success agreement"]["met"] is True


def test_the_suite_it_writes_is_the_family_asked_for(tmp_path):
    from trajforge.collectors.tasks import load_suite

    terminal = load_suite(str(sim_rl.write_suite(tmp_path / "t.yaml", "terminal", 12, 0)))
    kvstore = load_suite(str(sim_rl.write_suite(tmp_path / "k.yaml", "kvstore", 12, 0)))
    assert len(terminal.tasks) == 12 and terminal.environment.kind == "terminal"
    assert len(kvstore.tasks) == 12 and kvstore.environment.kind == "mcp"


def test_the_tiny_models_width_and_depth_reach_every_training_run_and_only_the_tiny_ones():
    flags = sim_rl.shape(terminal(["--hidden-size", "256", "--layers", "6", "--lr", "1e-3"]))
    assert flags == ["--context-length", "512", "--batch-size", "4", "--lr", "0.001", "--hidden-size", "256",
                     "--layers", "6"]  # fmt: skip
    assert "--hidden-size" not in sim_rl.shape(terminal(["--init", "smollm2", "--hidden-size", "256"]))
    assert sim_rl.shape(terminal([])) == ["--context-length", "512", "--batch-size", "4"]


def test_make_sim_demo_runs_the_terminal_family_then_the_mcp_family_each_at_its_context():
    args = sim_rl.arguments([])
    assert args.families == ["terminal", "kvstore"]
    kvstore = sim_rl.family_arguments(args, "kvstore")
    assert kvstore.family == "kvstore" and sim_rl.shape(kvstore)[:2] == ["--context-length", "1024"]
    assert args.context_length is None and args.family is None  # one family's settings do not leak into the next
    given = sim_rl.arguments(["--family", "kvstore", "--family", "kvstore", "--context-length", "768"])
    assert given.families == ["kvstore"] and sim_rl.family_arguments(given, "kvstore").context_length == 768


def test_every_family_runs_into_its_own_folder_and_one_summary_table_holds_them_all(tmp_path, monkeypatch, capsys):
    def run_family(args, out):
        clean, faulty = ([100, 40, 70, 60, 70], [90, 20, 40, 25, 50]) if args.family == "terminal" else (
            [100, 10, 10, 10, 10], [90, 0, 0, 0, 0])  # fmt: skip
        table = rows(clean, faulty)
        found = sim_rl.targets(table, sim_rl.fidelity(checked(0.85, 60.0, 0.9, 0.95)))
        return {"out": str(out), "context": args.context_length, "rows": list(table.values()), "targets": found}

    monkeypatch.setattr(sim_rl, "run_family", run_family)
    sim_rl.main(["--output", str(tmp_path), "--results", str(tmp_path / "results"), "--seeds", "0", "1", "2"])
    summary = json.loads((tmp_path / "sim-rl.json").read_text())["families"]
    (record,) = (tmp_path / "results").glob("sim-rl-*.md")
    assert "- seeds: seeds [0, 1, 2], task_seed 0" in record.read_text()
    assert [f["out"] for f in summary.values()] == [str(tmp_path / "terminal"), str(tmp_path / "kvstore")]
    assert [f["context"] for f in summary.values()] == [512, 1024]
    printed = capsys.readouterr().out.splitlines()
    terminal_rows = [line for line in printed if line.startswith("terminal ")]
    kvstore_rows = [line for line in printed if line.startswith("kvstore ")]
    assert len(terminal_rows) == len(kvstore_rows) == len(NAMES) + 1
    assert sim_rl.CONTROLLED_RL in terminal_rows[-2] and " 70% [" in terminal_rows[-2]
    assert "7 of 7 targets met" in terminal_rows[-1] and "targets met" in kvstore_rows[-1]
    assert " 10% [" in kvstore_rows[1] and " 10% [" not in terminal_rows[1]


def test_the_sft_agents_episodes_are_collected_on_training_tasks_only_and_train_a_second_world_model(
    tmp_path, monkeypatch
):
    from trajforge.agents.agent_eval import held_out_suites
    from trajforge.collectors.tasks import load_suite
    from trajforge.schemas.splits import SplitConfig

    args = terminal(["--output", str(tmp_path), "--tasks", "60", "--wm-agent-repeats", "2"])
    suite = sim_rl.write_suite(tmp_path / "suite.yaml", "terminal", 60, 0)
    commands, worlds = [], []
    monkeypatch.setattr(sim_rl, "trajforge_allowing_errors", lambda *a: commands.append(a) or 1.0)
    monkeypatch.setattr(sim_rl, "world_model", lambda a, out, s, suffix="": worlds.append(suffix) or out / suffix)
    world = sim_rl.world_model_with_agent(args, tmp_path, tmp_path / "agent-sft" / "checkpoint-9", {})

    (command,) = commands
    collected = {command[i + 1] for i, flag in enumerate(command) if flag == "--task"}
    held_out = {t.id for part in ("test", "validation")
                for t in held_out_suites([load_suite(str(suite))], SplitConfig(), part)[0].tasks}  # fmt: skip
    assert held_out and not collected & held_out and len(collected) + len(held_out) == 60
    assert command[command.index("--agent") + 1] == str(tmp_path / "agent-sft" / "checkpoint-9")
    assert command[command.index("--repeats") + 1] == "2" and command[command.index("--run-id") + 1] == "agent"
    assert command[command.index("--temperature") + 1] == "1.0"  # agent-rl's default sampling temperature
    assert worlds == ["-agent"] and world == tmp_path / "-agent"
    said = sim_rl.header(args, [{"clean": {"episodes": 6}}], None)
    assert "trained again with 2 real SFT-agent episodes per training task" in said
    assert "trained again" not in sim_rl.header(terminal([]), [{"clean": {"episodes": 6}}], None)


def test_sim_check_runs_the_episodes_of_the_agent_every_rl_row_starts_from(tmp_path, monkeypatch):
    commands = []
    monkeypatch.setattr(sim_rl, "trajforge_allowing_errors", lambda *a: commands.append(a) or 1.0)
    (tmp_path / "sim-check.json").write_text('{"world_model": "wm", "single_step": {}}')
    sft = tmp_path / "agent-sft" / "checkpoint-9"
    result = sim_rl.sim_check(terminal([]), tmp_path, tmp_path / "world", sft, {})
    (command,) = commands
    assert command[0] == "sim-check" and command[command.index("--agent") + 1] == str(sft)
    assert command[command.index("--world-model") + 1] == str(tmp_path / "world") and result["world_model"] == "wm"
    assert command[command.index("--part") + 1] == "test"


def test_an_agent_of_another_model_trains_from_it_with_its_own_learning_rate(tmp_path, monkeypatch):
    commands = []
    monkeypatch.setattr(sim_rl, "trajforge", lambda *a: commands.append(a) or 1.0)
    argv = ["--output", str(tmp_path), "--lr", "2e-3", "--hidden-size", "256", "--agent-init", "smollm2"]
    args = terminal([*argv, "--agent-lr", "1e-4"])
    sim_rl.agent_sft(args, tmp_path, {})
    (command,) = commands
    assert command[command.index("--init") + 1] == "smollm2" and "--tokenizer" not in command
    assert command[command.index("--lr") + 1] == "0.0001" and "--hidden-size" not in command
    assert "(agent: smollm2)" in sim_rl.header(args, [{"clean": {"episodes": 6}}], None)

    commands.clear()
    sim_rl.agent_sft(terminal(argv[:-2]), tmp_path, {})
    (command,) = commands  # the default: the tiny agent in the world model's tokenizer, with the world model's shape
    assert command[command.index("--tokenizer") + 1] == str(tmp_path / "world" / "tokenizer")
    assert command[command.index("--lr") + 1] == "0.002" and command[command.index("--hidden-size") + 1] == "256"
    with pytest.raises(SystemExit):
        sim_rl.arguments(["--init", "smollm2", "--agent-init", "tiny"])


def test_auto_decides_file_comparisons_by_the_rule_that_agrees_better_and_reports_its_agreement():
    result = checked(0.85, 60.0, 0.527, 0.95)
    assert sim_rl.file_check_rule("auto", result) == "content"  # no exit-code figure recorded: the default
    result["episodes"]["success"]["all"]["by_exit_code"] = {"agreement": 0.74}
    assert sim_rl.file_check_rule("auto", result) == "exit-code"
    assert sim_rl.file_check_rule("content", result) == "content"  # as the user said
    assert sim_rl.fidelity(result, "exit-code")["success_agreement"] == 0.74
    assert sim_rl.fidelity(result)["success_agreement"] == 0.527
    result["episodes"]["success"]["all"]["by_exit_code"] = {"agreement": 0.527}
    assert sim_rl.file_check_rule("auto", result) == "content"  # a tie keeps the content rule


def test_auto_chooses_the_file_check_rule_on_the_validation_tasks_never_on_the_test_tasks(tmp_path, monkeypatch):
    """The validation sim-check's episodes favour the exit-code rule, the test sim-check's the content rule: the rule
    is the validation one, and the test part's sim-check is not run to choose it."""
    validation, test = checked(0.85, 60.0, 0.60, 0.95), checked(0.85, 60.0, 0.90, 0.95)
    validation["episodes"]["success"]["all"]["by_exit_code"] = {"agreement": 0.80}
    test["episodes"]["success"]["all"]["by_exit_code"] = {"agreement": 0.50}
    parts = []

    def sim_check(args, out, world, sft, seconds, part="test"):
        parts.append(part)
        return {"validation": validation, "test": test}[part]

    monkeypatch.setattr(sim_rl, "sim_check", sim_check)
    rule, chosen_on = sim_rl.choose_file_check(terminal(["--file-check", "auto"]), tmp_path, tmp_path, tmp_path, {})
    assert (rule, chosen_on, parts) == ("exit-code", validation, ["validation"])
    assert sim_rl.choose_file_check(terminal(["--file-check", "content"]), tmp_path, tmp_path, tmp_path, {}) == (
        "content", None)  # fmt: skip
    assert parts == ["validation"]  # a rule the user gave needs no choosing


def test_the_validation_sim_check_reports_apart_from_the_test_one(tmp_path, monkeypatch):
    commands = []
    monkeypatch.setattr(sim_rl, "trajforge_allowing_errors", lambda *a: commands.append(a) or 1.0)
    (tmp_path / "sim-check-validation.json").write_text('{"world_model": "wm", "single_step": {}}')
    sim_rl.sim_check(terminal([]), tmp_path, tmp_path / "world", tmp_path / "sft", {}, part="validation")
    (command,) = commands
    assert command[command.index("--part") + 1] == "validation"
    assert command[command.index("--report") + 1] == str(tmp_path / "sim-check-validation.json")


def test_every_rl_row_is_trained_once_per_seed_from_the_same_sft_start(tmp_path, monkeypatch):
    commands = []
    monkeypatch.setattr(sim_rl, "trajforge", lambda *a: commands.append(a) or 1.0)
    sft = tmp_path / "agent-sft" / "checkpoint-9"
    args = terminal(["--seeds", "0", "1", "2", "--rl-steps", "5"])
    rows = sim_rl.rl_rows(args, tmp_path, sft, tmp_path / "world", "content", {})
    assert len(commands) == 9 and all(c[c.index("--init") + 1] == str(sft) for c in commands)
    assert [c[c.index("--seed") + 1] for c in commands] == ["0"] * 3 + ["1"] * 3 + ["2"] * 3
    assert rows[sim_rl.CONTROLLED_RL] == [tmp_path / f"rl-controlled-seed-{s}" / "checkpoint-5" for s in (0, 1, 2)]
    assert len({c[c.index("-o") + 1] for c in commands}) == 9  # every run into its own folder
    checks = [c for c in commands if "--sim-check-corpus" in c]  # the simulator's figures read the SFT start: once
    assert len(checks) == 1 and checks[0][checks[0].index("-o") + 1] == str(tmp_path / "rl-sim-seed-0")


def test_agent_eval_is_greedy_unless_several_samples_are_asked_for_and_the_header_says_how_it_sampled(
    tmp_path, monkeypatch
):
    commands = []
    monkeypatch.setattr(sim_rl, "trajforge_allowing_errors", lambda *a: commands.append(a) or 1.0)
    (tmp_path / "eval-clean.json").write_text('{"agents": []}')
    agents = {sim_rl.SFT: [tmp_path / "sft"], sim_rl.REAL_RL: [tmp_path / "r0", tmp_path / "r1"]}
    sim_rl.evaluate(terminal([]), tmp_path, agents, False, {})
    sim_rl.evaluate(terminal(["--eval-repeats", "4"]), tmp_path, agents, False, {})
    greedy, sampled = commands
    assert "--temperature" not in greedy and "--repeats" not in greedy  # agent-eval's default: greedy, one sample
    assert sampled[sampled.index("--repeats") + 1] == "4" and sampled[sampled.index("--temperature") + 1] == "0.7"
    assert [greedy[i + 1] for i, flag in enumerate(greedy) if flag == "--agent"] == [
        str(tmp_path / name) for name in ("sft", "r0", "r1")]  # fmt: skip
    with pytest.raises(SystemExit):
        sim_rl.arguments(["--eval-repeats", "4", "--eval-temperature", "0"])
    said = sim_rl.header(terminal([]), [{"clean": {"episodes": 6}}], {"temperature": 0.0, "samples_per_task": 1,
                                                                       "seed": 0})  # fmt: skip
    assert "agent-eval: greedy (temperature 0), 1 sample per task, seed 0" in said
    assert "each RL row from the same agent-SFT start with one seed (0): each RL figure is from one seed" in said


def test_each_rows_reports_are_found_in_the_order_agent_eval_was_given_them():
    agents = {sim_rl.SFT: ["s"], sim_rl.REAL_RL: ["r0", "r1"], sim_rl.SIM_RL: ["u0", "u1"]}
    report = {"agents": [{"agent": name} for name in ("scripted", "s", "r0", "r1", "u0", "u1")]}
    found = sim_rl.reports_by_row(report, agents)
    assert {row: [r["agent"] for r in reports] for row, reports in found.items()} == {
        sim_rl.SCRIPTED: ["scripted"], sim_rl.SFT: ["s"], sim_rl.REAL_RL: ["r0", "r1"],
        sim_rl.SIM_RL: ["u0", "u1"]}  # fmt: skip
