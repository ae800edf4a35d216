"""Issue 55's targets as benchmarks/sim_rl.py reads them: the simulator's fidelity figures from sim-check, each
target decided by a 95% interval (met, NOT met, or this run cannot tell) and the reading in plain words."""

# this folder is on sys.path when run as a script
from learning_signal import aligned
from sim_rl_rows import RL_ROWS, SFT, arm
from sim_rl_table import paired, pct

from trajforge.evaluation.fidelity import one_sided
from trajforge.evaluation.paired import clustered_mean_interval

SHARE_OF_REAL, EXACT, AGREEMENT = 0.8, 0.8, 0.85


def fidelity(result: dict) -> dict:
    """sim-check's figures over all test turns and episodes, as the reading uses them, with their intervals where
    sim-check gave them."""
    step = result["single_step"].get("all", {})
    world = step.get(result["world_model"], {})
    baselines = {n: f for n, f in step.items() if n != result["world_model"]}
    episodes = result.get("episodes", {})

    def over_all(part: str, key: str):
        return episodes.get(part, {}).get("all", {}).get(key)

    return {
        "world_model": result["world_model"],
        "turns": world.get("turns"),
        "exact_match": world.get("exact_match"),
        "exact_match_interval": world.get("exact_match_interval"),
        "factuality": world.get("judge_factuality"),
        "baselines": {
            n: {"exact_match": f.get("exact_match"), "factuality": f.get("judge_factuality")}
            for n, f in baselines.items()
        },  # fmt: skip
        "paired": world.get("paired") or {},  # per baseline: the world model minus it on the same turns, per figure
        "success_agreement": over_all("success", "agreement"),
        "agreement_interval": over_all("success", "agreement_interval"),
        "real_outcomes": over_all("success", "real_outcomes"),
        "wm2real_exact_match": over_all("wm2real", "exact_match"),
        "sim_successes_real": over_all("wm2real", "real_share_of_simulated_successes"),
        "faults_produced": over_all("controllability", "produced_share"),
        "produced_interval": over_all("controllability", "produced_interval"),  # over tasks, repeats one cluster
        "instructed_faults": over_all("controllability", "instructed_faults"),  # the denominator: every one asked
        "fault_tasks": over_all("controllability", "tasks"),
        "clean_turns": over_all("controllability", "clean_share"),
    }


def decide(low: float | None, high: float | None, target: float, strict: bool = False) -> bool | None:
    """met (True) when the whole 95% interval reaches `target` (lies above it, `strict`), NOT met (False) when it
    lies wholly below it (at or below it, `strict`), and None (cannot tell) when it reaches both sides."""
    if low is None or high is None:
        return None
    if strict:
        return True if low > target else False if high <= target else None
    return True if low >= target else False if high < target else None


NO_INTERVAL = "sim-check gave no interval"


def _interval_target(target: str, figure: float | None, interval: list | None, threshold: float) -> dict:
    """A share (exact match, agreement) decided by its 95% interval against `threshold`."""
    found = {"target": target, "figure": figure, "unit": "share", "interval": interval, "threshold": threshold}
    if not interval:
        return found | {"met": None, "undecided_because": NO_INTERVAL}
    return found | {"met": decide(interval[0], interval[1], threshold)}


def _agreement_target(fid: dict) -> dict:
    """Success agreement with the agent's own episodes, by its interval; undecided when its real episodes all ended
    one way (a world model predicting that outcome alone would agree on every one)."""
    target = f"success agreement >= {AGREEMENT:.0%} with both real successes and real failures among the episodes"
    found = _interval_target(target, fid["success_agreement"], fid["agreement_interval"], AGREEMENT)
    why = one_sided(fid["real_outcomes"]) if fid["real_outcomes"] else "sim-check recorded no real outcome"
    if found["met"] is not None and why:
        return found | {"met": None, "undecided_because": why}
    return found


BASELINE_FIGURES = {"exact_match": "exact match", "judge_factuality": "factuality"}


def _baselines_target(fid: dict) -> dict:
    """The world model beats every baseline (copy, retrieval) on exact match and on factuality: met when each
    paired difference on the same turns (sim-check's `paired`) lies above 0, NOT met when any lies at or below it."""
    verdicts, said, missing = [], [], False
    for baseline in fid["baselines"]:
        for key, label in BASELINE_FIGURES.items():
            difference = (fid["paired"].get(baseline) or {}).get(key)
            missing |= difference is None
            verdicts.append(None if difference is None else decide(difference["low"], difference["high"], 0.0, True))
            said.append(f"{label} minus {baseline} {difference['describe'] if difference else '-'}")
    met = False if False in verdicts else True if verdicts and all(verdicts) else None
    found = {"target": "the world model beats copy and retrieval on exact match and factuality", "figure": None,
             "unit": "", "met": met, "detail": "; ".join(said)}  # fmt: skip
    if met is None:
        why = NO_INTERVAL if missing else "an interval reaches both sides of 0"
        found["undecided_because"] = why if verdicts else "sim-check ran no baseline"
    return found


def _gain_target(target: str, difference: dict | None) -> dict:
    """A gain decided by its paired 95% interval: met when the whole interval lies above 0."""
    found = {"target": target, "figure": None, "unit": "points", "paired": difference, "threshold": 0.0}
    if difference is None:
        return found | {"met": None, "undecided_because": "the two rows share no scored test task"}
    met = decide(difference["low"], difference["high"], 0.0, strict=True)
    return found | {"figure": 100 * difference["difference"], "met": met}


def share_margin(rows: dict[str, dict], real_rl: str, sim_rl: str) -> dict | None:
    """Per test task, the simulated gain minus SHARE_OF_REAL times the real one (both over agent SFT, clean), its
    mean with a 95% interval over tasks (a task's samples one cluster): above 0 where sim RL reaches the share."""
    sft, real, sim = aligned(*(rows[row]["clean"]["outcomes"] for row in (SFT, real_rl, sim_rl)))
    values, clusters = [], []
    for task in sft:
        for s, r, c in zip(sft[task], real[task], sim[task], strict=True):
            values.append((c - s) - SHARE_OF_REAL * (r - s))
            clusters.append(task)
    if not values:
        return None
    mean, low, high = clustered_mean_interval(values, clusters)
    return {"mean": mean, "low": low, "high": high}


def _share_target(rows: dict[str, dict], real_rl: str, sim_rl: str) -> dict:
    """RL in the simulator's gain as a share of real RL's: both paired differences over agent SFT and the ratio of
    their means; decided by the paired margin, and never while real RL's gain holds zero."""
    real, sim = paired(rows, SFT, real_rl, "clean"), paired(rows, SFT, sim_rl, "clean")
    target = f"RL in the simulator gains >= {SHARE_OF_REAL:.0%} of what RL in the real environment gains"
    found = {"target": target, "figure": None, "unit": "share", "met": None, "real_gain": real, "sim_gain": sim}
    if real is None or sim is None:
        return found | {"undecided_because": "the rows share no scored test task"}
    if real["low"] <= 0:
        where = "holds zero" if real["high"] >= 0 else "lies below zero"
        return found | {"undecided_because": f"RL in the real environment's gain over agent SFT, {real['describe']}, "
                        f"{where}: there is no gain to take a share of"}  # fmt: skip
    margin = share_margin(rows, real_rl, sim_rl)
    met = None if margin is None else decide(margin["low"], margin["high"], 0.0)
    return found | {"figure": sim["difference"] / real["difference"], "margin": margin, "met": met}


def targets(rows: dict[str, dict], fid: dict, guide: str | None = None) -> list[dict]:
    """Each of issue 55's targets: its figure and whether it is met (None: this run cannot tell), each decided by a
    95% interval; a comparison of two rows is their paired difference over the same test tasks. `guide`: the arm
    whose rows the targets read (rl_arms' first)."""
    real, sim, controlled = (arm(row, guide) for row in RL_ROWS)
    return [
        _interval_target(f"single-step exact match >= {EXACT:.0%}", fid["exact_match"], fid["exact_match_interval"],
                         EXACT),
        _agreement_target(fid),
        _baselines_target(fid),
        _gain_target("RL in the simulator (controlled) raises real success over agent SFT",
                     paired(rows, SFT, controlled, "clean")),
        _share_target(rows, real, controlled),
        _gain_target("under real faults, controlled simulation beats uncontrolled",
                     paired(rows, sim, controlled, "faults")),
    ]  # fmt: skip


VERDICTS = {True: "met", False: "NOT met", None: "cannot tell from this run"}
ABOVE = {True: "the whole 95% interval lies above", False: "the whole 95% interval lies at or below",
         None: "the 95% interval reaches both sides of"}  # fmt: skip
REACHES = {True: "the whole 95% interval is at or above", False: "the whole 95% interval is below",
           None: "the 95% interval reaches both sides of"}  # fmt: skip


def seeds_said(seeds: list[int]) -> str:
    if len(seeds) == 1:
        return f"one seed ({seeds[0]}): each RL figure is from one seed"
    return f"{len(seeds)} seeds ({', '.join(map(str, seeds))}): each RL figure pools them"


def reading(found: list[dict], seeds: list[int]) -> str:
    """The targets in plain words: how many are met and from how many seeds, then each with its figure."""
    met = sum(t["met"] is True for t in found)
    lines = [f"{met} of {len(found)} targets met; the RL rows trained with {seeds_said(seeds)}."]
    lines += [f"- {t['target']}: {VERDICTS[t['met']]}{_detail(t)}" for t in found]
    return "\n".join(lines)


def _detail(t: dict) -> str:
    """What follows a target's verdict: its paired difference or interval against the threshold, or its figures,
    and why it cannot tell."""
    if t.get("paired") is not None:
        return f": {t['paired']['describe']} on the same test tasks; {ABOVE[t['met']]} 0"
    if "real_gain" in t:
        return _share_detail(t)
    said = ""
    if t.get("interval"):
        low, high = t["interval"]
        said = f": {pct(t['figure'])} [{pct(low)}, {pct(high)}]"
        if not t.get("undecided_because"):
            said += f"; {REACHES[t['met']]} {pct(t['threshold'])}"
    elif t.get("detail") or t.get("figure") is not None:
        said = f" ({t.get('detail') or pct(t['figure'])})"
    if t["met"] is None and t.get("undecided_because"):
        said += f" ({t['undecided_because']})"
    return said


def _share_detail(t: dict) -> str:
    sim, real = t["sim_gain"], t["real_gain"]
    if t["figure"] is None:
        return f" ({t['undecided_because']}" + (f"; RL in the simulator's: {sim['describe']})" if sim else ")")
    margin = t["margin"] or {}
    where = {True: "lies above 0", False: "lies below 0", None: "reaches both sides of 0"}[t["met"]]
    return (f": {t['figure']:.0%} of real RL's gain (the ratio of the means; over agent SFT, RL in the simulator "
            f"{sim['describe']}, RL in the real environment {real['describe']}); the paired margin, the simulated "
            f"gain minus {SHARE_OF_REAL:.0%} of the real one, {_points_interval(margin)} {where}")  # fmt: skip


def _points_interval(figures: dict) -> str:
    if figures.get("mean") is None:
        return "-"
    return f"{100 * figures['mean']:+.1f} points [{100 * figures['low']:+.1f}, {100 * figures['high']:+.1f}]"
