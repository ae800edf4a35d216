"""The table of benchmarks/sim_rl.py: each row's success in each part (one report's rate and interval, or the mean
and spread of its seeds), its paired difference from agent SFT on the same tasks, guided minus unguided, and how
they print."""

import statistics

# this folder is on sys.path when run as a script
from learning_signal import aligned
from sim_rl_rows import PARTS, RL_ROWS, SCRIPTED, SFT, arm

from trajforge.agents.agent_eval import paired_dict, paired_outcomes


def _score(reports: list[dict]) -> dict:
    """A row's success in one condition. One report (one checkpoint): its rate and 95% interval as agent-eval gave
    them. Several (one per seed): the mean of the seeds' rates and their spread (min, max, sd). Either way the
    per-task outcomes of each report, in seed order: what the paired differences read."""
    rates = [r["overall"]["success_rate"] for r in reports]
    score = {"episodes": sum(r["overall"]["scored"] for r in reports),
             "successes": sum(r["overall"]["successes"] for r in reports),
             "outcomes": [r.get("outcomes", {}) for r in reports]}  # fmt: skip
    if len(reports) == 1:
        low, high = reports[0]["overall"].get("interval") or (None, None)
        return score | {"success_rate": rates[0], "interval": [low, high], "per_seed": None, "spread": None}
    known = [rate for rate in rates if rate is not None]
    spread = None if not known else {"min": min(known), "max": max(known),
                                     "sd": statistics.stdev(known) if len(known) > 1 else 0.0}  # fmt: skip
    mean = sum(known) / len(known) if known else None
    return score | {"success_rate": mean, "interval": None, "per_seed": rates, "spread": spread}


def _mean_of(reports: list[dict], key: str) -> float | None:
    values = [r["overall"][key] for r in reports if r["overall"].get(key) is not None]
    return sum(values) / len(values) if values else None


def table(
    clean: dict[str, list[dict]], faulty: dict[str, list[dict]], seeds: list[int], held_out: dict | None = None
) -> list[dict]:
    """One row per agent (`clean`/`faulty`/`held_out`: row -> its agent-eval reports, one per seed for an RL row):
    its success on the test tasks, clean and under real faults, and on the held-out family's tasks when there are
    some; each row's paired difference from agent SFT's in each."""
    rows = []
    for name, reports in clean.items():
        row = {"row": name, "agents": [r["agent"] for r in reports], "model_free": reports[0]["model_free"],
               "seeds": None if name in (SCRIPTED, SFT) else seeds, "clean": _score(reports),
               "faults": _score(faulty[name]), "mean_turns": _mean_of(reports, "mean_turns"),
               "unparseable_rate": _mean_of(reports, "unparseable_rate")}  # fmt: skip
        if held_out is not None:
            row["held_out_family"] = _score(held_out[name])
        rows.append(row)
    by_row = {r["row"]: r for r in rows}
    for r in rows:
        if r["row"] != SFT and SFT in by_row:
            r["vs_sft"] = {part: paired(by_row, SFT, r["row"], part) for part in PARTS if part in r}
    return rows


def paired(rows: dict[str, dict], reference: str, other: str, part: str) -> dict | None:
    """`other`'s success minus `reference`'s in `part` (clean, faults, held_out_family), paired by task over the same
    tasks and pooled over seeds (a task's samples one cluster); None when they share no scored task."""
    if reference not in rows or other not in rows or part not in rows[reference]:
        return None
    ours, theirs = aligned(rows[reference][part]["outcomes"], rows[other][part]["outcomes"])
    difference = paired_outcomes(ours, theirs)
    if difference is None:
        return None
    tasks = len(ours)
    of = "tasks" if difference.n == tasks else f"samples of {tasks} tasks, a task's one cluster"
    return paired_dict(difference, of) | {"tasks": tasks}


def guided_minus_unguided(args, rows: dict[str, dict]) -> dict | None:
    """With --guide, per RL row and part: the guided arm's success minus the unguided one's, paired over the same
    tasks seed with seed (the same start and episodes); None without a guide."""
    if args.guide == "none":
        return None
    parts = [part for part in PARTS if part in rows[SFT]]
    return {row: {part: paired(rows, arm(row, "none"), arm(row, args.guide), part) for part in parts}
            for row in RL_ROWS}  # fmt: skip


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _cell(score: dict) -> str:
    """One condition of a row: rate [95% interval] and counts; over several seeds the mean, min-max and sd."""
    counts = f"{score['successes']}/{score['episodes']}"
    spread = score.get("spread")
    if spread:
        seeds = f"{len(score['per_seed'])} seeds {pct(spread['min'])}-{pct(spread['max'])} sd {100 * spread['sd']:.1f}"
        return f"{pct(score['success_rate']):>4} mean, {seeds} {counts}"
    low, high = score["interval"] or (None, None)
    interval = f"[{pct(low)}, {pct(high)}]" if low is not None else "[-]"
    return f"{pct(score['success_rate']):>4} {interval:<11} {counts}"


def _name_width(rows: list[dict]) -> int:
    return max(42, *(len(r["row"]) + 2 for r in rows))


def _columns(rows: list[dict], first: str = "agent (test tasks, real environment)") -> str:
    heads = {"clean": "clean: success", "faults": "--faults unreliable", "held_out_family": "held-out family, clean"}
    return f"{first:<{_name_width(rows)}} " + " ".join(f"{heads[p]:<42}" for p in PARTS if p in rows[0])


def _cells(r: dict, width: int) -> str:
    return f"{r['row']:<{width}} " + " ".join(f"{_cell(r[part]):<42}" for part in PARTS if part in r)


def print_table(rows: list[dict], fid: dict) -> None:
    width = _name_width(rows)
    print(f"\n{_columns(rows)}")
    for r in rows:
        print(_cells(r, width))
    print("\npaired against agent SFT on the same tasks (row minus agent SFT, 95% interval, seeds pooled):")
    for r in rows:
        if r.get("vs_sft"):
            print(f"  {r['row']:<{width - 2}} " + _paired_parts(r["vs_sft"]))
    bases = ", ".join(f"{n}: exact {pct(b['exact_match'])}, factuality {_num(b['factuality'])}"
                      for n, b in fid["baselines"].items())  # fmt: skip
    print(f"\nsimulator {fid['world_model']} (sim-check, test tasks): single step on {fid['turns']} turns: exact "
          f"{pct(fid['exact_match'])}{_interval(fid['exact_match_interval'])}, factuality {_num(fid['factuality'])} "
          f"({bases}); success agreement {pct(fid['success_agreement'])}{_interval(fid['agreement_interval'])}"
          f"{_outcomes(fid)}; WM2Real exact {pct(fid['wm2real_exact_match'])}, simulated successes real "
          f"{pct(fid['sim_successes_real'])}; {_produced(fid)}, clean turns {pct(fid['clean_turns'])}")  # fmt: skip


def _paired_parts(differences: dict[str, dict | None]) -> str:
    return "; ".join(f"{PARTS[part]} {_paired_text(d)}" for part, d in differences.items())


def print_guides(args, differences: dict | None) -> None:
    if differences is None:
        return
    print(f"\nguided minus unguided (--guide {args.guide}; the same start, seeds and episodes; paired, seeds pooled):")
    width = max(len(row) for row in differences)
    for row, parts in differences.items():
        print(f"  {row:<{width}} {_paired_parts(parts)}")


def _interval(interval: list | None) -> str:
    return f" [{pct(interval[0])}, {pct(interval[1])}]" if interval else ""


def _paired_text(difference: dict | None) -> str:
    return difference["describe"] if difference else "- (no shared scored task)"


def _produced(fid: dict) -> str:
    """Instructed faults produced, its interval over tasks and its denominator, every fault instructed."""
    return (f"instructed faults produced {pct(fid['faults_produced'])}{_interval(fid.get('produced_interval'))} of "
            f"{fid['instructed_faults']} instructed (the denominator: every instructed fault) over "
            f"{fid.get('fault_tasks')} tasks")  # fmt: skip


def _outcomes(fid: dict) -> str:
    real = fid.get("real_outcomes")
    return f" (real: {real['success']} successes, {real['failure']} failures)" if real else ""


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def print_summary(results: dict[str, dict]) -> None:
    """Every family's rows in one table, each with how many of its targets were met."""
    for family, result in results.items():
        rows = result["rows"]
        width = _name_width(rows)
        print(f"\n{'family':<10} {_columns(rows)}")
        for r in rows:
            print(f"{family:<10} {_cells(r, width)}")
        met = sum(t["met"] is True for t in result["targets"])
        print(f"{family:<10} {met} of {len(result['targets'])} targets met (its reading above)")
