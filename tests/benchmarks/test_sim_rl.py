"""benchmarks/sim_rl.py (issue 55): its stages resumable, its RL rows guided and unguided from the same start, its
held-out-family row, the audits read from what agent-rl writes, and its reading against issue 55's targets decided
by intervals; on synthetic agent-eval and sim-check results and fake commands (the benchmark itself drives real
Docker; `make sim-demo` runs it)."""

import argparse
import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.builders import make_trajectory
from trajforge.collectors.writer import RunWriter
from trajforge.evaluation.intervals import wilson_interval

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import sim_rl  # noqa: E402 - the benchmarks folder is a script folder, not a package
import sim_rl_audits  # noqa: E402
import sim_rl_table  # noqa: E402
from learning_signal import aligned  # noqa: E402
from sim_rl_rows import CONTROLLED_RL, REAL_RL, RL_ROWS, SCRIPTED, SFT, SIM_RL, arm  # noqa: E402
from sim_rl_targets import fidelity, reading, targets  # noqa: E402
from stages import Stages  # noqa: E402

NAMES = [SCRIPTED, SFT, REAL_RL, SIM_RL, CONTROLLED_RL]
TASKS = 100
BASELINES = ("copy previous (model-free)", "retrieval (model-free)")


def report(name: str, solved: int | tuple[int, int], tasks: int = TASKS) -> dict:
    """A greedy agent-eval report of `name` on `tasks` test tasks: it solved `solved` of them, the first ones, or
    for (count, first) `count` tasks from the `first`-th on (how two rows' successes overlap sets the pairing)."""
    count, first = solved if isinstance(solved, tuple) else (solved, 0)
    outcomes = {f"task-{i:03d}": [int(first <= i < first + count)] for i in range(tasks)}
    overall = {"scored": tasks, "successes": count, "success_rate": count / tasks,
               "interval": list(wilson_interval(count, tasks)), "mean_turns": 2.0, "unparseable_rate": 0.0}  # fmt: skip
    return {"agent": name, "model_free": name == SCRIPTED, "overall": overall, "outcomes": outcomes}


def reports(solved: list, names: list[str] = NAMES) -> dict[str, list[dict]]:
    """Row -> its reports, in `names`' order: each entry a report's `solved`, or a list of them (one per seed)."""
    return {name: [report(name, s) for s in (row if isinstance(row, list) else [row])]
            for name, row in zip(names, solved, strict=True)}  # fmt: skip


def rows(clean: list, faulty: list, seeds: list[int] | None = None, held_out: list | None = None) -> dict[str, dict]:
    table = sim_rl_table.table(reports(clean), reports(faulty), seeds or [0], held_out and reports(held_out))
    return {r["row"]: r for r in table}


def difference(low: float, high: float, n: int = 50) -> dict:
    """A paired difference as sim-check records one (agents.agent_eval.paired_dict)."""
    mean = (low + high) / 2
    describe = f"{100 * mean:+.1f} points [{100 * low:+.1f}, {100 * high:+.1f}] (paired, {n} turns)"
    return {"n": n, "difference": mean, "low": low, "high": high, "describe": describe}


def checked(exact=0.85, exact_interval=(0.81, 0.89), agreement=0.9, agreement_interval=(0.86, 0.94),
            outcomes=(6, 14), above=(0.05, 0.25), produced=0.95) -> dict:  # fmt: skip
    """A sim-check JSON: the world model's exact match and agreement with their intervals (None: an older sim-check
    that gave none), the agent's real outcomes (successes, failures), each paired difference over a baseline."""
    paired = {b: {"exact_match": difference(*above), "judge_factuality": difference(*above)} for b in BASELINES}
    step = {"wm": {"turns": 50, "exact_match": exact, "judge_factuality": 60.0, "paired": paired,
                   "exact_match_interval": list(exact_interval) if exact_interval else None},
            BASELINES[0]: {"turns": 50, "exact_match": 0.4, "judge_factuality": 20.0},
            BASELINES[1]: {"turns": 50, "exact_match": 0.5, "judge_factuality": 30.0}}  # fmt: skip
    success = {"agreement": agreement, "real_outcomes": {"success": outcomes[0], "failure": outcomes[1]},
               "agreement_interval": list(agreement_interval) if agreement_interval else None}  # fmt: skip
    episodes = {"success": {"all": success}, "wm2real": {"all": {"exact_match": 0.7}},
                "controllability": {"all": {"produced_share": produced, "clean_share": 0.95}}}  # fmt: skip
    return {"world_model": "wm", "single_step": {"terminal/terminal-text": step, "all": step}, "episodes": episodes}


def terminal(argv: list[str]) -> argparse.Namespace:
    """The benchmark's arguments for its terminal family's run."""
    return sim_rl.family_arguments(sim_rl.arguments(argv), "terminal")


def by_target(found: list[dict]) -> dict[str, dict]:
    return {t["target"].split(":")[0].split(" >=")[0]: t for t in found}


EXACT, AGREEMENT = "single-step exact match", "success agreement"
GAIN, SHARE = "RL in the simulator (controlled) raises real success over agent SFT", "RL in the simulator gains"
CONTROL = "under real faults, controlled simulation beats uncontrolled"
BASELINES_TARGET = "the world model beats copy and retrieval on exact match and factuality"
GOOD = {"clean": [100, 40, 70, 60, 70], "faulty": [90, 20, 40, 25, 50]}


class Fake:
    """Stands in for the `trajforge` commands: each writes the artifact its stage is judged finished by (a collect
    run's manifest, a corpus's, a checkpoint folder, a report), recorded in `commands`; `stop_at`, a folder a command
    writes to, stops the run there as a kill would, after the command saved its first checkpoint."""

    def __init__(self, stop_at: Path | None = None):
        self.stop_at, self.commands = stop_at, []

    def __call__(self, *command: str) -> tuple[float, float]:
        self.commands.append(command)
        flag = lambda name: command[command.index(name) + 1]  # noqa: E731
        if command[0] in ("collect", "build-corpus", "curate-sft"):
            folder = Path(flag("--output")) / (flag("--run-id") if command[0] == "collect" else "")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "_manifest.json").write_text("{}")
        elif command[0] == "train":
            if Path(flag("-o")) == self.stop_at:
                (self.stop_at / "checkpoint-1").mkdir(parents=True)
                raise KeyboardInterrupt
            (Path(flag("-o")) / f"checkpoint-{flag('--max-steps')}").mkdir(parents=True, exist_ok=True)
        elif command[0] == "sim-check":
            Path(flag("--report")).write_text(json.dumps(checked()))
        elif command[0] == "agent-eval":
            agents = ["scripted", *(command[i + 1] for i, c in enumerate(command) if c == "--agent")]
            evaluated = {"agents": [report(a, 5, tasks=10) for a in agents], "sampling": {"temperature": 0.0,
                         "samples_per_task": 1, "seed": 0}}  # fmt: skip
            Path(flag("--report")).write_text(json.dumps(evaluated))
        return 1.0, 100.0

    def stages(self, *commands) -> list[str]:
        return [c for c in self.commands if c[0] in commands]


def test_a_run_that_meets_every_target_says_so():
    found = targets(rows(**GOOD), fidelity(checked()))
    assert len(found) == 6 and all(t["met"] is True for t in found)
    gain = by_target(found)[GAIN]
    assert gain["figure"] == pytest.approx(30) and gain["paired"]["low"] > 0
    share = by_target(found)[SHARE]
    assert share["figure"] == pytest.approx(1.0) and share["margin"]["low"] > 0  # 30 - 0.8 x 30 points, above 0
    said = reading(found, [0])
    assert said.startswith("6 of 6 targets met; the RL rows trained with one seed (0)")
    assert "single-step exact match >= 80%: met: 85% [81%, 89%]; the whole 95% interval is at or above 80%" in said
    assert "success agreement >= 85% with both real successes and real failures among the episodes: met: 90% [86%" in (
        said
    )
    assert "over agent SFT: met: +30.0 points [" in said
    assert "(paired, 100 tasks) on the same test tasks; the whole 95% interval lies above 0" in said
    assert "exact match minus retrieval (model-free) +15.0 points [+5.0, +25.0] (paired, 50 turns)" in said


def test_missed_targets_are_said_plainly_with_their_intervals():
    """Every target NOT met, each by its interval: wholly below the threshold, or wholly at or below 0."""
    table = rows(clean=[100, 40, 70, 30, 30], faulty=[90, 20, 40, 40, 20])
    fid = fidelity(checked(exact=0.5, exact_interval=(0.45, 0.55), agreement=0.6, agreement_interval=(0.5,
                                  0.7), above=(-0.2, -0.05)))  # fmt: skip
    found = targets(table, fid)
    assert [t["met"] for t in found] == [False] * 6
    text = reading(found, [0])
    assert text.startswith(f"0 of {len(found)} targets met") and text.count("NOT met") == len(found)
    assert "exact match >= 80%: NOT met: 50% [45%, 55%]; the whole 95% interval is below 80%" in text
    assert "over agent SFT: NOT met: -10.0 points [" in text and "the whole 95% interval lies at or below 0" in text


def test_each_target_cannot_tell_where_its_interval_reaches_both_sides():
    """Exact match 82% and agreement 88% are above their targets, but their intervals reach below them; the world
    model's paired difference over a baseline holds zero; RL in the simulator's +12 points over agent SFT, its
    successes sharing few tasks with agent SFT's, holds zero too."""
    table = rows(clean=[100, 40, 70, (52, 30), (52, 30)], faulty=[90, 20, 20, (31, 60), 31])
    fid = fidelity(checked(exact=0.82, exact_interval=(0.76, 0.87), agreement=0.88, agreement_interval=(0.8,
                                  0.93), above=(-0.02, 0.1)))  # fmt: skip
    found = by_target(targets(table, fid))
    undecided = [EXACT, AGREEMENT, BASELINES_TARGET, GAIN, CONTROL]
    assert {key: t["met"] for key, t in found.items() if key != SHARE} == dict.fromkeys(undecided)
    gain = found[GAIN]["paired"]
    assert found[GAIN]["figure"] == pytest.approx(12) and gain["low"] < 0 < gain["high"]
    text = reading(list(found.values()), [0])
    undecided = "exact match >= 80%: cannot tell from this run: 82% [76%, 87%]; the 95% interval reaches both sides"
    assert f"{undecided} of 80%" in text
    baselines = "factuality: cannot tell from this run (exact match minus copy previous (model-free) +4.0 points [-2.0"
    assert baselines in text and "(an interval reaches both sides of 0)" in text
    assert "over agent SFT: cannot tell from this run: +12.0 points [" in text


def test_the_baselines_target_is_not_met_when_one_paired_difference_lies_at_or_below_zero():
    result = checked()
    result["single_step"]["all"]["wm"]["paired"][BASELINES[1]]["judge_factuality"] = difference(-0.1, 0.0)
    result["single_step"]["all"]["wm"]["paired"][BASELINES[0]]["exact_match"] = difference(-0.05, 0.1)
    found = by_target(targets(rows(**GOOD), fidelity(result)))
    assert found[BASELINES_TARGET]["met"] is False


def test_an_older_sim_check_without_intervals_leaves_its_targets_undecided_and_says_why():
    """A sim-check JSON from before the intervals: exact match 90% and agreement 95% are not called met on their
    point figures, nor is the world model above a baseline it has no paired factuality for."""
    result = checked(exact=0.9, exact_interval=None, agreement=0.95, agreement_interval=None)
    for paired in result["single_step"]["all"]["wm"]["paired"].values():
        del paired["judge_factuality"]
    found = by_target(targets(rows(**GOOD), fidelity(result)))
    assert [found[k]["met"] for k in (EXACT, AGREEMENT)] == [None, None]
    baselines = found[BASELINES_TARGET]
    assert baselines["met"] is None and baselines["undecided_because"] == "sim-check gave no interval"
    text = reading(list(found.values()), [0])
    assert "single-step exact match >= 80%: cannot tell from this run (90%) (sim-check gave no interval)" in text
    del result["episodes"]
    del result["single_step"]["all"]["wm"]["paired"]
    found = by_target(targets(rows(**GOOD), fidelity(result)))
    assert found[AGREEMENT]["met"] is None and found[GAIN]["met"] is True


def test_agreement_over_real_episodes_that_all_failed_decides_nothing_and_the_reading_says_why(capsys):
    fid = fidelity(checked(agreement=1.0, agreement_interval=(0.88, 1.0), outcomes=(0, 14)))
    assert fid["real_outcomes"] == {"success": 0, "failure": 14}
    found = targets(rows(**GOOD), fid)
    agreement = by_target(found)[AGREEMENT]
    assert agreement["met"] is None and agreement["figure"] == 1.0
    said = reading(found, [0])
    assert "among the episodes: cannot tell from this run: 100% [88%, 100%] (the agent's real episodes all failed" in (
        said
    )
    sim_rl_table.print_table(list(rows(**GOOD).values()), fid)
    assert "success agreement 100% [88%, 100%] (real: 0 successes, 14 failures)" in capsys.readouterr().out


def test_the_share_of_real_rls_gain_cannot_be_told_while_real_rls_gain_holds_zero():
    """Real RL +4 points over agent SFT, its paired interval holding zero: there is no gain to take a share of, and
    the reading says so with both differences."""
    table = rows(clean=[100, 40, (44, 10), 60, 65], faulty=[90, 20, 40, 25, 50])
    found = by_target(targets(table, fidelity(checked())))
    share = found[SHARE]
    assert share["real_gain"]["low"] <= 0 < share["real_gain"]["difference"] and share["met"] is None
    assert share["figure"] is None and share["sim_gain"]["difference"] == pytest.approx(0.25)
    text = reading(list(found.values()), [0])
    undecided = "gains: cannot tell from this run (RL in the real environment's gain over agent SFT, +4.0 points ["
    assert undecided in text
    assert "holds zero: there is no gain to take a share of; RL in the simulator's: +25.0 points [" in text
    worse = rows(clean=[100, 40, 20, 60, 65], faulty=[90, 20, 40, 25, 50])  # real RL lost 20 points
    lost = by_target(targets(worse, fidelity(checked())))[SHARE]
    assert lost["met"] is None and "lies below zero: there is no gain to take a share of" in lost["undecided_because"]


def test_three_seeds_give_each_rl_row_its_mean_and_spread_and_pool_the_paired_difference(capsys):
    """Each RL row trained at three seeds: the table shows the mean over the seeds and their min-max and sd, and
    the difference from agent SFT pairs each task's three RL outcomes with agent SFT's one (a task one cluster)."""
    table = rows(clean=[100, 40, [60, 70, 80], [40, 45, 50], [60, 65, 70]], faulty=[90, 20, [30] * 3, [20] * 3,
                 [40, 45, 50]], seeds=[0, 1, 2])  # fmt: skip
    real = table[REAL_RL]
    assert real["seeds"] == [0, 1, 2] and table[SFT]["seeds"] is None
    assert real["clean"]["success_rate"] == pytest.approx(0.7) and real["clean"]["per_seed"] == [0.6, 0.7, 0.8]
    assert real["clean"]["spread"] == {"min": 0.6, "max": 0.8, "sd": pytest.approx(0.1)}
    versus = real["vs_sft"]["clean"]
    assert versus["n"] == 300 and versus["tasks"] == 100 and versus["difference"] == pytest.approx(0.3)
    assert "bootstrap over clusters" in versus["method"] and "(paired, 300 samples of 100 tasks" in versus["describe"]
    found = targets(table, fidelity(checked()))
    said = reading(found, [0, 1, 2])
    assert "the RL rows trained with 3 seeds (0, 1, 2): each RL figure pools them" in said and "one seed" not in said
    sim_rl_table.print_table(list(table.values()), fidelity(checked()))
    printed = capsys.readouterr().out
    real_line = next(line for line in printed.splitlines() if line.startswith(REAL_RL))
    assert " 70% mean, 3 seeds 60%-80% sd 10.0 210/300" in real_line
    assert f"  {REAL_RL:<40} clean +30.0 points [" in printed


def test_controlled_and_uncontrolled_rows_pair_seed_with_seed():
    """Two RL rows of the same seeds: each seed's outcomes against the same seed's, never crossed."""
    sft = [{"a": [0], "b": [0]}]
    first = [{"a": [1], "b": [0]}, {"a": [0], "b": [1]}]
    second = [{"a": [1], "b": [1]}, {"a": [0], "b": [0]}]
    ours, theirs, base = aligned(first, second, sft)
    assert ours == {"a": [1, 0], "b": [0, 1]} and theirs == {"a": [1, 0], "b": [1, 0]}
    assert base == {"a": [0, 0], "b": [0, 0]}  # one seed stands beside each of the others
    with pytest.raises(ValueError):
        aligned(first, [{"a": [1]}] * 3)


def test_the_table_keeps_every_condition_and_prints_the_held_out_family_beside_the_test_tasks(capsys):
    table = rows(**GOOD, held_out=[80, 10, 20, 10, 15])
    assert table[CONTROLLED_RL]["faults"]["successes"] == 50 and table[SCRIPTED]["model_free"]
    assert table[SFT]["clean"]["interval"] == list(wilson_interval(40, 100))
    assert table[REAL_RL]["vs_sft"]["held_out_family"]["difference"] == pytest.approx(0.1)
    fid = fidelity(checked())
    sim_rl_table.print_table(list(table.values()), fid)
    printed = capsys.readouterr().out
    assert "held-out family, clean" in printed.splitlines()[1]
    controlled = next(line for line in printed.splitlines() if line.startswith(CONTROLLED_RL))
    assert " 70% [" in controlled and " 50% [" in controlled and " 15% [" in controlled
    assert "exact 85% [81%, 89%]" in printed and "retrieval (model-free): exact 50%" in printed
    assert (f"  {CONTROLLED_RL:<40} clean +30.0 points [" in printed
            and "; held-out family +5.0 points [" in printed)  # fmt: skip


def test_controllability_is_printed_with_its_interval_tasks_and_denominator(capsys):
    result = checked(produced=0.93)
    result["episodes"]["controllability"]["all"] |= {"produced_interval": [0.85, 0.97], "instructed_faults": 97,
                                                     "tasks": 24}  # fmt: skip
    sim_rl_table.print_table(list(rows(**GOOD).values()), fidelity(result))
    assert "instructed faults produced 93% [85%, 97%] of 97 instructed (the denominator: every instructed fault) " in (
        capsys.readouterr().out
    )


def test_the_suites_it_writes_are_the_family_asked_for_and_its_held_out_family(tmp_path):
    from trajforge.collectors.tasks import load_suite

    terminal_suite = load_suite(str(sim_rl.write_suite(tmp_path / "t.yaml", "terminal", 12, 0)))
    kvstore = load_suite(str(sim_rl.write_suite(tmp_path / "k.yaml", "kvstore", 12, 0)))
    held_out = load_suite(str(sim_rl.write_suite(tmp_path / "h.yaml", "terminal", 12, 0, "terminal-files")))
    assert len(terminal_suite.tasks) == 12 and terminal_suite.environment.kind == "terminal"
    assert len(kvstore.tasks) == 12 and kvstore.environment.kind == "mcp"
    assert held_out.environment.kind == "terminal" and {t.family for t in held_out.tasks} == {"terminal-files"}
    assert {t.family for t in terminal_suite.tasks} == {"terminal-text"}


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
    with pytest.raises(SystemExit):
        sim_rl.arguments(["--file-check", "auto"])  # the world model is never shown a check's expected value


def test_every_family_runs_into_its_own_folder_and_one_summary_table_holds_them_all(tmp_path, monkeypatch, capsys):
    def run_family(args, out):
        clean, faulty = ([100, 40, 70, 60, 70], [90, 20, 40, 25, 50]) if args.family == "terminal" else (
            [100, 10, 10, 10, 10], [90, 0, 0, 0, 0])  # fmt: skip
        table = rows(clean, faulty)
        found = targets(table, fidelity(checked()))
        stages = {"collect scripted": {"seconds": 30.0}, "agent SFT": {"seconds": 60.0}}
        return {"out": str(out), "context": args.context_length, "rows": list(table.values()), "targets": found,
                "stages": stages}  # fmt: skip

    monkeypatch.setattr(sim_rl, "run_family", run_family)
    sim_rl.main(["--output", str(tmp_path), "--results", str(tmp_path / "results"), "--seeds", "0", "1", "2"])
    summary = json.loads((tmp_path / "sim-rl.json").read_text())["families"]
    (record,) = (tmp_path / "results").glob("sim-rl-*.md")
    assert "- seeds: seeds [0, 1, 2], task_seed 0" in record.read_text()
    assert [f["out"] for f in summary.values()] == [str(tmp_path / "terminal"), str(tmp_path / "kvstore")]
    assert [f["context"] for f in summary.values()] == [512, 1024]
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    terminal_rows = [line for line in lines if line.startswith("terminal ")]
    kvstore_rows = [line for line in lines if line.startswith("kvstore ")]
    assert len(terminal_rows) == len(kvstore_rows) == len(NAMES) + 1
    assert CONTROLLED_RL in terminal_rows[-2] and " 70% [" in terminal_rows[-2]
    assert "6 of 6 targets met" in terminal_rows[-1] and "targets met" in kvstore_rows[-1]
    assert " 10% [" in kvstore_rows[1] and " 10% [" not in terminal_rows[1]
    assert "s in this invocation, 180 s over every stage" in printed  # both families' stages


def test_the_sft_agents_episodes_are_collected_on_training_tasks_only_and_train_a_second_world_model(tmp_path):
    from trajforge.agents.agent_eval import held_out_suites
    from trajforge.collectors.tasks import load_suite
    from trajforge.schemas.splits import SplitConfig

    args = terminal(["--output", str(tmp_path), "--tasks", "60", "--wm-agent-repeats", "2"])
    suite = sim_rl.write_suite(tmp_path / "suite.yaml", "terminal", 60, 0)
    fake = Fake()
    world = sim_rl.world_model_with_agent(args, tmp_path, tmp_path / "agent-sft" / "checkpoint-9", Stages(
        tmp_path, {}, run=fake))  # fmt: skip

    (command, build, cpt) = fake.commands
    collected = {command[i + 1] for i, flag in enumerate(command) if flag == "--task"}
    held_out = {t.id for part in ("test", "validation")
                for t in held_out_suites([load_suite(str(suite))], SplitConfig(), part)[0].tasks}  # fmt: skip
    assert held_out and not collected & held_out and len(collected) + len(held_out) == 60
    assert command[command.index("--agent") + 1] == str(tmp_path / "agent-sft" / "checkpoint-9")
    assert command[command.index("--repeats") + 1] == "2" and command[command.index("--run-id") + 1] == "agent"
    assert command[command.index("--temperature") + 1] == "1.0"  # agent-rl's default sampling temperature
    assert build[build.index("--output") + 1] == str(tmp_path / "corpus-agent")
    assert world == tmp_path / "world-agent" / "checkpoint-60"
    said = sim_rl.header(args, [{"clean": {"episodes": 6}}], None)
    assert "trained again with 2 real SFT-agent episodes per training task" in said
    assert "trained again" not in sim_rl.header(terminal([]), [{"clean": {"episodes": 6}}], None)


def test_sim_check_runs_the_episodes_of_the_agent_every_rl_row_starts_from_and_never_shows_a_checks_value(tmp_path):
    fake = Fake()
    sft = tmp_path / "agent-sft" / "checkpoint-9"
    corpus = tmp_path / "corpus-agent"
    result = sim_rl.sim_check(terminal([]), tmp_path, tmp_path / "world", sft, corpus, Stages(tmp_path, {}, run=fake))
    (command,) = fake.commands
    assert flag_of(command, "--corpus") == str(corpus)
    assert command[0] == "sim-check" and command[command.index("--agent") + 1] == str(sft)
    assert command[command.index("--world-model") + 1] == str(tmp_path / "world") and result["world_model"] == "wm"
    assert command[command.index("--part") + 1] == "test" and "--simulate-file-check" not in command


def test_an_agent_of_another_model_trains_from_it_with_its_own_learning_rate(tmp_path):
    argv = ["--output", str(tmp_path), "--lr", "2e-3", "--hidden-size", "256", "--agent-init", "smollm2"]
    args = terminal([*argv, "--agent-lr", "1e-4"])
    fake = Fake()
    sim_rl.agent_sft(args, tmp_path, Stages(tmp_path / "a", {}, run=fake))
    (command,) = fake.commands
    assert command[command.index("--init") + 1] == "smollm2" and "--tokenizer" not in command
    assert command[command.index("--lr") + 1] == "0.0001" and "--hidden-size" not in command
    assert "(agent: smollm2)" in sim_rl.header(args, [{"clean": {"episodes": 6}}], None)

    fake = Fake()
    sim_rl.agent_sft(terminal(argv[:-2]), tmp_path, Stages(tmp_path / "b", {}, run=fake))
    (command,) = fake.commands  # the default: the tiny agent in the world model's tokenizer and shape
    assert command[command.index("--tokenizer") + 1] == str(tmp_path / "world" / "tokenizer")
    assert command[command.index("--lr") + 1] == "0.002" and command[command.index("--hidden-size") + 1] == "256"
    with pytest.raises(SystemExit):
        sim_rl.arguments(["--init", "smollm2", "--agent-init", "tiny"])


def flag_of(command: tuple, name: str) -> str | None:
    return command[command.index(name) + 1] if name in command else None


def test_every_rl_row_is_trained_once_per_seed_from_the_same_sft_start_saving_every_quarter(tmp_path):
    fake = Fake()
    sft = tmp_path / "agent-sft" / "checkpoint-9"
    args = terminal(["--seeds", "0", "1", "2", "--rl-steps", "9", "--audit-every", "2"])
    rows = sim_rl.rl_rows(args, tmp_path, sft, tmp_path / "world", tmp_path / "corpus", Stages(tmp_path, {}, run=fake))
    commands = fake.commands
    assert len(commands) == 9 and all(flag_of(c, "--init") == str(sft) for c in commands)
    assert [flag_of(c, "--seed") for c in commands] == ["0"] * 3 + ["1"] * 3 + ["2"] * 3
    assert {flag_of(c, "--save-every") for c in commands} == {"2"} and {flag_of(c, "--guide") for c in commands} == {
        "none"}  # fmt: skip
    assert rows[CONTROLLED_RL] == [tmp_path / f"rl-controlled-seed-{s}" / "checkpoint-9" for s in (0, 1, 2)]
    assert len({flag_of(c, "-o") for c in commands}) == 9  # every run into its own folder
    checks = [c for c in commands if "--sim-check-corpus" in c]  # the simulator's figures read the SFT start: once
    assert len(checks) == 1 and flag_of(checks[0], "-o") == str(tmp_path / "rl-sim-seed-0")
    assert flag_of(checks[0], "--sim-check-corpus") == str(tmp_path / "corpus")
    audited = {flag_of(c, "-o").rsplit("/", 1)[1] for c in commands if flag_of(c, "--audit-every") == "2"}
    assert audited == {f"rl-{row}-seed-{s}" for row in ("sim", "controlled") for s in (0, 1, 2)}  # real RL: none
    assert not any("--simulate-file-check" in c for c in commands)
    unaudited = Fake()
    sim_rl.rl_rows(terminal(["--audit-every", "0"]), tmp_path / "x", sft, tmp_path, tmp_path / "corpus",
                   Stages(tmp_path / "x", {}, run=unaudited))  # fmt: skip
    assert len(unaudited.commands) == 3 and not any("--audit-every" in c for c in unaudited.commands)


def test_with_a_guide_every_rl_row_runs_guided_and_unguided_from_the_same_start_seeds_and_episodes(tmp_path):
    fake = Fake()
    sft = tmp_path / "agent-sft" / "checkpoint-9"
    args = terminal(["--seeds", "0", "1", "--guide", "scripted"])
    rows = sim_rl.rl_rows(args, tmp_path, sft, tmp_path / "world", tmp_path / "corpus", Stages(tmp_path, {}, run=fake))
    assert list(rows) == [f"{row}, {arm}" for row in RL_ROWS for arm in ("guide scripted", "no guide")]
    assert len(fake.commands) == 12 and len({flag_of(c, "-o") for c in fake.commands}) == 12
    assert [flag_of(c, "--guide") for c in fake.commands] == ["scripted"] * 6 + ["none"] * 6  # every guided run first
    by_run = {}
    for c in fake.commands:
        apart = ("--guide", "-o", "--sim-check-corpus")  # the simulator's figures before RL: read once, by the first
        rest = [x for i, x in enumerate(c) if x not in apart and c[i - 1] not in apart]
        by_run.setdefault(tuple(rest), []).append(flag_of(c, "--guide"))
    assert sorted(by_run.values()) == [["scripted", "none"]] * 6  # each run twice, differing only in its guide
    assert rows["RL in the real environment, no guide"] == [tmp_path / f"rl-real-none-seed-{s}" / "checkpoint-3"
                                                            for s in (0, 1)]  # fmt: skip
    assert sum("--sim-check-corpus" in c for c in fake.commands) == 1


def test_guided_minus_unguided_is_paired_per_row_and_the_targets_read_the_guided_rows(capsys):
    guided, unguided = (f"{CONTROLLED_RL}, guide scripted", f"{CONTROLLED_RL}, no guide")
    names = [
        SCRIPTED,
        SFT,
        *(arm(r, g) for r in RL_ROWS for g in ("scripted", "none")),
    ]
    solved = {"clean": [100, 40, 70, 50, 60, 45, 70, 40], "faulty": [90, 20, 40, 30, 25, 25, 50, 20]}
    table = sim_rl_table.table(*(reports(solved[p], names) for p in ("clean", "faulty")), [0])
    by_row = {r["row"]: r for r in table}
    assert by_row[guided]["seeds"] == [0]
    differences = sim_rl_table.guided_minus_unguided(terminal(["--guide", "scripted"]), by_row)
    assert differences[CONTROLLED_RL]["clean"]["difference"] == pytest.approx(0.3)
    assert differences[REAL_RL]["faults"]["difference"] == pytest.approx(0.1)
    assert sim_rl_table.guided_minus_unguided(terminal([]), by_row) is None
    found = by_target(targets(by_row, fidelity(checked()), "scripted"))
    assert found[GAIN]["figure"] == pytest.approx(30) and found[CONTROL]["figure"] == pytest.approx(25)
    sim_rl_table.print_guides(terminal(["--guide", "scripted"]), differences)
    printed = capsys.readouterr().out
    assert "guided minus unguided (--guide scripted; the same start, seeds and episodes" in printed
    assert f"  {CONTROLLED_RL:<{len(SIM_RL)}} clean +30.0 points [" in printed and unguided not in printed


def test_agent_eval_is_greedy_unless_several_samples_are_asked_for_and_the_header_says_how_it_sampled(tmp_path):
    fake = Fake()
    agents = {SFT: [tmp_path / "sft"], REAL_RL: [tmp_path / "r0", tmp_path / "r1"]}
    sim_rl.evaluate(terminal([]), tmp_path, agents, Stages(tmp_path / "a", {}, run=fake))
    sim_rl.evaluate(terminal(["--eval-repeats", "4"]), tmp_path, agents, Stages(tmp_path / "b", {}, run=fake))
    greedy, sampled = fake.commands
    assert "--temperature" not in greedy and "--repeats" not in greedy  # agent-eval's default: greedy, one sample
    assert flag_of(sampled, "--repeats") == "4" and flag_of(sampled, "--temperature") == "0.7"
    assert [greedy[i + 1] for i, flag in enumerate(greedy) if flag == "--agent"] == [
        str(tmp_path / name) for name in ("sft", "r0", "r1")]  # fmt: skip
    with pytest.raises(SystemExit):
        sim_rl.arguments(["--eval-repeats", "4", "--eval-temperature", "0"])
    said = sim_rl.header(terminal([]), [{"clean": {"episodes": 6}}], {"temperature": 0.0, "samples_per_task": 1,
                                                                       "seed": 0})  # fmt: skip
    assert "agent-eval: greedy (temperature 0), 1 sample per task, seed 0" in said
    assert "each RL row from the same agent-SFT start with one seed (0): each RL figure is from one seed" in said


def test_the_held_out_family_row_reads_every_row_on_terminal_files_tasks_clean_and_kvstore_says_it_has_none(tmp_path):
    fake = Fake()
    agents = {SFT: [tmp_path / "sft"], REAL_RL: [tmp_path / "r0"]}
    args = terminal(["--held-out-family-tasks", "30", "--task-seed", "3"])
    found = sim_rl.held_out_family(args, tmp_path, agents, Stages(tmp_path, {}, run=fake))
    (command,) = fake.commands
    suite = Path(flag_of(command, "--suite"))
    assert suite == tmp_path / "suite-held-out-family.yaml"
    written = suite.read_text()
    assert "family: terminal-files, count: 30, seed: 3" in written and "terminal-text" not in written
    assert flag_of(command, "--held-out-family") == "terminal-files" and flag_of(command, "--part") == "test"
    assert "--faults" not in command and flag_of(command, "--policy") == "scripted"
    assert len(found["agents"]) == 3 and flag_of(command, "--report") == str(tmp_path / "eval-held-out-family.json")
    assert "held-out family terminal-files (30 tasks, no stage trains on it), clean" in sim_rl.header(
        args, [{"clean": {"episodes": 6}}], None)  # fmt: skip
    kvstore = sim_rl.family_arguments(sim_rl.arguments([]), "kvstore")
    assert sim_rl.held_out_family(kvstore, tmp_path, agents, Stages(tmp_path, {}, run=fake)) is None
    assert "no held-out family for this environment" in sim_rl.header(kvstore, [{"clean": {"episodes": 6}}], None)
    none = terminal(["--held-out-family-tasks", "0"])
    assert sim_rl.held_out_family(none, tmp_path, agents, Stages(tmp_path, {}, run=fake)) is None
    assert len(fake.commands) == 1


def test_each_rows_reports_are_found_in_the_order_agent_eval_was_given_them():
    agents = {SFT: ["s"], REAL_RL: ["r0", "r1"], SIM_RL: ["u0", "u1"]}
    report_ = {"agents": [{"agent": name} for name in ("scripted", "s", "r0", "r1", "u0", "u1")]}
    found = sim_rl.reports_by_row(report_, agents)
    assert {row: [r["agent"] for r in reports] for row, reports in found.items()} == {
        SCRIPTED: ["scripted"], SFT: ["s"], REAL_RL: ["r0", "r1"],
        SIM_RL: ["u0", "u1"]}  # fmt: skip


def test_a_family_stopped_in_an_rl_row_reruns_only_what_was_unfinished_and_reuses_every_finished_stage(
    tmp_path, monkeypatch, capsys
):
    """The first invocation is killed in the controlled RL row's run (after its half-way checkpoint); the second,
    with the same flags, runs that row again (train resumes it from its checkpoint) and the stages after it, and
    reuses every other stage's artifacts, seconds and peak memory."""
    argv = ["--output", str(tmp_path), "--family", "terminal", "--guide", "scripted", "--held-out-family-tasks", "12"]
    args, out = terminal(argv), tmp_path / "terminal"
    killed = Fake(stop_at=out / "rl-controlled-none-seed-0")
    monkeypatch.setattr(sim_rl, "run_command", killed)
    with pytest.raises(KeyboardInterrupt):
        sim_rl.run_family(args, out)
    finished = set(json.loads((out / "stages.json").read_text())["stages"])
    assert len(finished) == 12  # 3 collects, corpus, cpt, agent SFT, sim-check and 5 of the 6 RL runs

    resumed = Fake()
    monkeypatch.setattr(sim_rl, "run_command", resumed)
    result = sim_rl.run_family(args, out)
    rerun = [c[:2] if c[0] == "train" else c[:1] for c in resumed.commands]
    assert rerun == [("train", "agent-rl"), ("agent-eval",), ("agent-eval",), ("agent-eval",)]
    assert flag_of(resumed.commands[0], "-o") == str(out / "rl-controlled-none-seed-0")
    assert flag_of(resumed.commands[0], "--guide") == "none"
    assert flag_of(resumed.commands[3], "--held-out-family") == "terminal-files"
    provenance = result["stages"]
    assert {name for name, stage in provenance.items() if stage["reused"]} == finished
    assert all(stage["peak_mib"] == 100.0 for stage in provenance.values())
    printed = capsys.readouterr().out
    assert "reused from an earlier invocation of this run: collect scripted, collect explorer" in printed
    assert "peak resident memory: collect scripted 0.1 GiB" in printed
    assert "s over every stage (collect scripted 1, collect explorer 1" in printed
    assert [r["row"] for r in result["rows"]][2:] == [arm(r, g) for r in RL_ROWS
                                                      for g in ("scripted", "none")]  # fmt: skip
    assert "held_out_family" in result["rows"][0] and result["held_out_family"] == "terminal-files"
    assert set(result["guided_minus_unguided"]) == set(RL_ROWS)

    again = Fake()
    monkeypatch.setattr(sim_rl, "run_command", again)
    with pytest.raises(SystemExit, match="--rl-steps 3 -> 4"):
        sim_rl.run_family(terminal([*argv, "--rl-steps", "4"]), out)
    sim_rl.run_family(sim_rl.family_arguments(sim_rl.arguments([*argv, "--family", "kvstore"]), "terminal"), out)
    assert again.commands == []  # which other families run beside it changes none of its stages


def write_run(folder: Path, episodes: dict[str, tuple[str, list[str]]], source: str) -> None:
    """A raw run folder as collect and agent-rl write it: episode key -> (outcome, its shell actions)."""
    writer = RunWriter(folder)
    for key, (status, actions) in episodes.items():
        turns = [{"index": i, "action": {"kind": "shell", "content": a}, "observation": {"content": ""}}
                 for i, a in enumerate(actions)]  # fmt: skip
        writer.add(make_trajectory(source={"kind": source, "by": "agent-rl", "origin": key}, turns=turns,
                                   outcome={"status": status}))  # fmt: skip
    writer.flush()


def test_the_audits_are_read_from_the_run_folder_agent_rl_writes(tmp_path, capsys):
    """Step 2 of a simulated run was audited (its metrics line has `audit`), twice over a resume: the world model
    paid two episodes the real environment failed and failed one it passed; one replay is of an earlier run of the
    step (its actions differ) and one simulated episode ended with no decided outcome."""
    run = tmp_path / "rl-sim-seed-0"
    run.mkdir()
    audit = {"episodes": 6, "agreement": 0.5, "sim_successes_real": 0.33, "real_success": 0.33,
             "run": str(run / "audit" / "step-00002")}  # fmt: skip
    lines = [{"step": 1, "success": 0.5}, {"step": 2, "audit": audit}, {"step": 2, "audit": audit}]
    (run / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    task = "sim-rl-terminal/t{}#step2.{}"
    simulated = {task.format(1, 0): ("success", ["ls", "cat a"]), task.format(1, 1): ("success", ["ls"]),
                 task.format(2, 0): ("success", ["echo x > a"]), task.format(2, 1): ("failure", ["echo y > a"]),
                 task.format(3, 0): ("failure", ["true"]), task.format(3, 1): ("unknown", ["rm a"]),
                 task.format(4, 0): ("success", ["cp a b"])}  # fmt: skip
    real = {"t1": [("failure", ["ls", "cat a"]), ("failure", ["ls"])], "t2": [("success", ["echo x > a"]),
            ("success", ["echo y > a"])], "t3": [("failure", ["true"]), ("failure", ["rm a"])],
            "t4": [("success", ["cp b a"])]}  # fmt: skip
    write_run(run / "episodes" / "step-00002", simulated, "simulated")
    write_run(run / "episodes" / "step-00001", {task.format(1, 0).replace("step2", "step1"): ("success", ["ls"])},
              "simulated")  # fmt: skip
    replays = {f"sim-rl-terminal/{t}.replay-step2.{i}#0": e for t, pair in real.items() for i, e in enumerate(pair)}
    write_run(run / "audit" / "step-00002", replays, "collected")
    counts = sim_rl_audits.audit_counts(run)
    assert counts == {"steps": 1, "audited": 5, "paid_not_real": 2, "real_not_paid": 1, "undecided": 1, "stale": 1}
    assert sim_rl_audits.audit_counts(tmp_path / "rl-controlled-seed-0")["steps"] == 0  # a run that wrote nothing

    args = terminal(["--audit-every", "2", "--seeds", "0", "1"])
    shutil.copytree(run, tmp_path / "rl-sim-seed-1")  # seed 1's audits found the same
    found = sim_rl_audits.audit_figures(args, tmp_path)
    assert found[SIM_RL]["pooled"]["paid_not_real"] == 4 and found[SIM_RL]["pooled"]["audited"] == 10
    assert found[CONTROLLED_RL]["pooled"]["steps"] == 0
    sim_rl_audits.print_audits(args, found)
    printed = capsys.readouterr().out
    assert (f"  {SIM_RL}: paid 4 of 10 audited episodes the real environment did not (40%), did not pay 2 it "
            "did, over 2 audited steps (2 undecided, 2 stale left out)") in printed  # fmt: skip
    assert "    seed 1: paid 2 of 5 audited episodes" in printed
    assert f"  {CONTROLLED_RL}: no audited step recorded" in printed
    assert sim_rl_audits.audit_figures(terminal(["--audit-every", "0"]), tmp_path) is None


def test_the_world_model_is_its_checkpoint_at_the_lowest_validation_loss_saved_wm_checkpoints_times(tmp_path, capsys):
    """Issue 55 item 1: trained within a budget of steps, the world model is chosen on the validation part."""

    def fake(*command):
        done = Fake()(*command)
        if command[0] == "train":  # four evaluations on validation, the best at step 30
            run = Path(command[command.index("-o") + 1])
            for step, loss in ((15, 2.0), (30, 1.2), (45, 1.3), (60, 1.4)):
                (run / f"checkpoint-{step}").mkdir(parents=True, exist_ok=True)
                with (run / "metrics.jsonl").open("a") as lines:
                    lines.write(json.dumps({"step": step, "eval_loss": loss}) + "\n")
        return done

    args = terminal(["--output", str(tmp_path), "--wm-checkpoints", "4"])
    world = sim_rl.world_model(args, tmp_path, Stages(tmp_path, {}, run=fake))
    assert world == tmp_path / "world" / "checkpoint-30"
    assert "world model CPT: checkpoint-30, the lowest validation loss" in capsys.readouterr().out
    assert sim_rl.world_model(terminal(["--output", str(tmp_path / "one")]), tmp_path / "one", Stages(
        tmp_path / "one", {}, run=Fake())) == tmp_path / "one" / "world" / "checkpoint-60"  # fmt: skip


def test_with_the_agents_episodes_a_pretrained_agent_needs_one_world_model_and_its_corpus_is_the_baselines(tmp_path):
    """--wm-agent-repeats with SmolLM2 as the agent: the world model before the agent's episodes joined the corpus
    would be trained for nothing (only a tiny agent needs its tokenizer); sim-check's retrieval baseline and the RL
    preflight search the corpus the simulator was trained on."""
    fake = Fake()
    args = terminal(["--output", str(tmp_path), "--init", "smollm2", "--wm-agent-repeats", "1"])
    sim_rl.train_family(args, tmp_path, Stages(tmp_path, {}, run=fake))
    trained = [flag_of(c, "-o") for c in fake.stages("train")]
    assert str(tmp_path / "world") not in trained and str(tmp_path / "world-agent") in trained
    assert [flag_of(c, "--output") for c in fake.stages("build-corpus")] == [str(tmp_path / "corpus-agent")]
    (check,) = fake.stages("sim-check")
    assert flag_of(check, "--corpus") == str(tmp_path / "corpus-agent")
    assert flag_of(check, "--world-model") == str(tmp_path / "world-agent" / "checkpoint-60")
    (preflight,) = [c for c in fake.commands if "--sim-check-corpus" in c]
    assert flag_of(preflight, "--sim-check-corpus") == str(tmp_path / "corpus-agent")
    tiny = Fake()  # the tiny agent: both world models, the first for its tokenizer
    sim_rl.train_family(terminal(["--wm-agent-repeats", "1"]), tmp_path / "t", Stages(tmp_path / "t", {}, run=tiny))
    assert [Path(flag_of(c, "-o")).name for c in tiny.stages("train")][:2] == ["world", "agent-sft"]


def agent_learning_run(run: Path, argv: list[str], finished: dict[str, str]) -> None:
    """An agent_learning.py run folder as it leaves one: its stages.json (its own flags), suite, scripted collection
    and trained folders; `finished`: stage name -> its folder, and for an RL run the SFT row it started from."""
    import agent_learning

    args = agent_learning.arguments([*argv, "--output", str(run)])
    agent_learning.write_suite(run / "suite.yaml", "terminal-text", args.tasks, args.task_seed)
    record = {"seconds": 100.0, "peak_mib": 1024.0, "commit": "abcdef0123", "finished": "2026-12-07 20:28 UTC"}
    stages = {}
    for name, folder in finished.items():
        folder, _, start = folder.partition(" from ")
        if name == "collect":
            (run / folder).mkdir(parents=True)
            (run / folder / "_manifest.json").write_text("{}")
            continue
        steps = args.rl_steps if folder.startswith("rl-") else args.sft_steps
        checkpoint = run / folder / f"checkpoint-{steps}"
        checkpoint.mkdir(parents=True)
        init = str(run / start / f"checkpoint-{args.sft_steps}") if start else args.init
        (checkpoint / "checkpoint.json").write_text(json.dumps({"init": init}))
        stages[name] = {**record, "artifact": str(checkpoint)}
    stages["collect"] = {**record, "artifact": str(run / "raw" / "scripted" / "_manifest.json")}
    flags = {k: v for k, v in vars(args).items() if k != "results"}
    (run / "stages.json").write_text(json.dumps({"flags": flags, "stages": stages}))
    agent_learning.write_suite(run / "suite-held-out-family.yaml", "terminal-files", args.held_out_family_tasks,
                               args.task_seed)  # fmt: skip
    evaluated = {"eval": ["sft-scratch", "sft-world", "rl-none-seed-0", None], "eval-held-out-family": [None]}
    for folder, agents in evaluated.items():  # agent-eval's runs, one per agent (None: the scripted policy)
        for i, agent in enumerate(agents):
            policy_args = {"checkpoint": str(run / agent / f"checkpoint-{args.sft_steps}")} if agent else {}
            (run / folder / f"run-{i}").mkdir(parents=True)
            (run / folder / f"run-{i}" / "_manifest.json").write_text(json.dumps({"config": {
                "policy_args": policy_args}}))  # fmt: skip


def test_an_agent_learning_runs_finished_stages_are_taken_where_every_shared_flag_agrees(tmp_path, capsys):
    """Issue 55 on 2 cores: the suite, scripted collection, agent SFT and real RL rows of agent_learning.py's
    SmolLM2 run (about 20 hours) are this run's. Its seed-1 guided row started from another SFT row and its seed-1
    unguided row had not finished: those two are trained here, as is everything agent_learning never runs."""
    run, out = tmp_path / "agent-learning", tmp_path / "sim" / "terminal"
    shared = ["--init", "smollm2", "--tasks", "60", "--task-seed", "11", "--sft-steps", "4", "--rl-steps", "4",
              "--lr", "1e-4", "--guide", "scripted", "--seeds", "0", "1"]  # fmt: skip
    agent_learning_run(run, shared, {
        "collect": "raw/scripted", "agent SFT from scratch": "sft-scratch", "agent SFT from world model": "sft-world",
        "agent-rl scripted seed 0": "rl-scripted-seed-0 from sft-scratch",
        "agent-rl none seed 0": "rl-none-seed-0 from sft-scratch",
        "agent-rl scripted seed 1": "rl-scripted-seed-1 from sft-world"})  # fmt: skip
    args = terminal([*shared, "--output", str(tmp_path / "sim"), "--from-agent-learning", str(run)])
    fake = Fake()
    stages = sim_rl.family_stages(args, out)
    stages._run = fake
    trained = sim_rl.train_family(args, out, stages)

    assert (out / "suite.yaml").read_text() == (run / "suite.yaml").read_text()  # its tasks, by its suite's name
    assert (out / "raw" / "scripted" / "_manifest.json").is_file() and not (out / "raw" / "scripted").is_symlink()
    assert (out / "agent-sft").resolve() == run / "sft-scratch"
    assert (out / "rl-real-none-seed-0").resolve() == run / "rl-none-seed-0"
    assert [flag_of(c, "--run-id") for c in fake.stages("collect")] == ["explorer", "faults"]
    assert not [c for c in fake.stages("train") if c[1] == "agent-sft"]
    rl_here = [Path(flag_of(c, "-o")).name for c in fake.stages("train") if c[1] == "agent-rl"]
    assert [n for n in rl_here if n.startswith("rl-real")] == ["rl-real-scripted-seed-1", "rl-real-none-seed-1"]
    assert trained["agents"][SFT] == [out / "agent-sft" / "checkpoint-4"]
    printed = capsys.readouterr().out
    assert f"= agent SFT: taken from {run / 'sft-scratch'} (finished 2026-12-07 20:28 UTC at abcdef0)" in printed
    assert f"- {arm(REAL_RL, 'scripted')}, seed 1: not taken, {run / 'rl-scripted-seed-1'} started from" in printed
    saved = json.loads((out / "stages.json").read_text())["stages"]
    assert saved["collect scripted"]["adopted_from"] == str(run / "raw" / "scripted")
    assert saved[SFT]["seconds"] == 100.0 and "adopted_from" not in saved["collect explorer"]
    assert "adopted from another run: collect scripted (" in stages.summary(1.0)
    # agent-eval is given the real paths, as the copied runs of that run's agent-eval recorded them
    assert sorted(p.name for p in (out / "eval-clean").iterdir()) == ["run-0", "run-2", "run-3"]  # not sft-world's
    assert [p.name for p in (out / "eval-held-out-family").iterdir()] == ["run-0"]
    evaluated = Fake()
    sim_rl.evaluate(args, out, trained["agents"], Stages(out / "e", {}, run=evaluated))
    given = [c for (command,) in [evaluated.commands] for i, c in enumerate(command) if command[i - 1] == "--agent"]
    assert given[:2] == [str(run / "sft-scratch" / "checkpoint-4"), str(run / "rl-scripted-seed-0" / "checkpoint-4")]
    held_out = (run / "suite-held-out-family.yaml").read_text()
    sim_rl.held_out_family(args, out, trained["agents"], Stages(out / "h", {}, run=Fake()))
    assert (out / "suite-held-out-family.yaml").read_text() == held_out  # that run's suite, name and all
    resumed = Fake()  # a second invocation computes nothing again
    again = sim_rl.family_stages(args, out)
    again._run = resumed
    sim_rl.train_family(args, out, again)
    assert resumed.commands == []

    for apart, said in ((["--sft-steps", "8"], "--sft-steps 8 here, 4 there"), (["--seeds", "0"], None)):
        argv = [*shared, *apart, "--output", str(tmp_path / f"other{len(said or '')}"), "--from-agent-learning",
                str(run)]  # fmt: skip
        other = terminal(argv)
        stages = sim_rl.family_stages(other, Path(other.output))
        stages._run = Fake()
        if said is None:  # fewer seeds here: the seed-0 rows are taken all the same
            sim_rl.train_family(other, Path(other.output), stages)
            continue
        with pytest.raises(SystemExit, match=said):
            sim_rl.train_family(other, Path(other.output), stages)
    with pytest.raises(SystemExit, match="needs a pretrained agent"):
        sim_rl.train_family(terminal(["--from-agent-learning", str(run)]), tmp_path / "t", Stages(tmp_path / "t", {}))


def test_a_finished_rl_run_keeps_its_final_checkpoint_only_and_a_stopped_one_its_resume_points(tmp_path):
    """The quarter checkpoints are there to resume from: once a run finished the tables read its last one, and
    each SmolLM2 checkpoint is half a gigabyte."""

    def quarters(*command):
        done = Fake()(*command)
        run = Path(flag_of(command, "-o"))
        for step in (1, 2, 3):  # what --save-every 1 of --max-steps 4 leaves before the last
            (run / f"checkpoint-{step}").mkdir(parents=True, exist_ok=True)
        return done

    args = terminal(["--rl-steps", "4", "--audit-every", "0"])
    rows = sim_rl.rl_rows(args, tmp_path, tmp_path / "sft", tmp_path / "world", tmp_path / "corpus",
                          Stages(tmp_path, {}, run=quarters))  # fmt: skip
    for (checkpoint,) in rows.values():
        assert sorted(p.name for p in checkpoint.parent.glob("checkpoint-*")) == ["checkpoint-4"]
    stopped = tmp_path / "stopped"
    with pytest.raises(KeyboardInterrupt):
        sim_rl.rl_rows(args, stopped, tmp_path / "sft", tmp_path / "world", tmp_path / "corpus",
                       Stages(stopped, {}, run=Fake(stop_at=stopped / "rl-real-seed-0")))  # fmt: skip
    assert (stopped / "rl-real-seed-0" / "checkpoint-1").is_dir()
