"""The fidelity figures of a world model against the real environment (what `trajforge sim-check` prints), as
pure functions over turns and episodes:

- single step: on real held-out turns, the share of predicted observations equal to the real one (trailing
  whitespace aside), the share whose error flag agrees with the real one, and the judge's scores; exact match per
  action (`action_label`: the tool, or the shell command's program), which says what the model gets wrong;
- success agreement: one agent's episodes of the same tasks, simulated and real: the confusion matrix of success;
- WM2Real: a simulated episode's actions replayed in the real environment: per-turn agreement (exact, error flag)
  and whether a simulated success is a real one.

A predicted observation is text only, so its error flag is read from it: an MCP result's `isError`, else an error
message in the text (ERROR_TEXT). A real observation's flag is its record's (`is_error`, a non-zero exit code)."""

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from trajforge.evaluation.benchmark import SCORE_KEYS, score
from trajforge.evaluation.extraction import extract_prediction
from trajforge.evaluation.facts import normalized
from trajforge.evaluation.judge import Judge
from trajforge.evaluation.turns import PredictionTurn

ERROR_TEXT = re.compile(
    r"No such file or directory|command not found|Permission denied|Traceback \(most recent call last\)|"
    r"^(?:\S+: )?(?:error|fatal|Error)\b|temporary failure|503 Service Unavailable|Is a directory|Not a directory|"
    r"invalid option|cannot (?:access|open|stat|create)",
    re.M,
)
SUCCESS_LABELS = {True: "success", False: "failure", None: "undecided"}


def same_observation(predicted: str, real: str) -> bool:
    return normalized(predicted) == normalized(real)


def real_error(observation: Mapping) -> bool:
    exit_code = observation.get("exit_code")
    return bool(observation.get("is_error")) or (exit_code is not None and exit_code != 0)


def predicted_error(text: str) -> bool:
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if isinstance(payload, dict) and "isError" in payload:
        return bool(payload["isError"])
    return bool(ERROR_TEXT.search(text))


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def action_label(action_text: str) -> str:
    """What a turn's action does, as its text's first word: the tool of a named call (schemas/turn_text.py puts
    the name first), the program of a shell command (`wc`, `sort`)."""
    words = action_text.split(maxsplit=1)
    return words[0] if words else "(empty)"


SOURCES = ("empty", "in the prompt", "elsewhere")


def answer_source(turn: PredictionTurn) -> str:
    """Where the real observation's text is to be found: `empty` (the action prints nothing), `in the prompt`
    (verbatim in the turn's prompt before it is fitted to a window: a `cat` of a file the initial state lists), or
    `elsewhere` (computed, or not to be known: a count, a sorted list, a timestamp). Exact match per source says
    whether a world model fails at copying or at computing."""
    reference = normalized(turn.reference)
    if not reference:
        return "empty"
    shown = normalized(f"{turn.system or ''}\n{turn.history_text()}")
    return "in the prompt" if reference in shown else "elsewhere"


def _exact(counts: Counter) -> dict:
    return {"turns": counts["turns"], "exact_match": _share(counts["exact"], counts["turns"])}


def step_figures(
    model: str,
    turns: Sequence[PredictionTurn],
    answers: Sequence[str | None],
    judge: Judge,
    details: list[dict] | None = None,
    scores: list[dict] | None = None,
) -> dict:
    """Exact match and error-flag agreement over the turns (an unanswered turn, None, counts as a miss: the
    simulator would have had nothing to show), exact match per action label (most turns first) and per answer
    source (SOURCES' order), and the judge's pooled scores (over every turn, as eval scores them). An empty
    answer is a prediction, not a missing one: `sort a > b` prints nothing, and a world model that says so is right.
    `details` gets one entry per turn (as eval's --predictions), with whether it matched exactly; `scores` gets each
    turn's judge scores, 0-100 as the pooled ones (eval's per-turn scores; {} where the judge failed)."""
    matched, flags = turn_agreement(turns, answers)
    exact, agree = sum(matched), sum(flags)
    by_action: dict[str, Counter] = {}
    by_source: dict[str, Counter] = {source: Counter() for source in SOURCES}
    for turn, same in zip(turns, matched, strict=True):
        for c in (by_action.setdefault(action_label(turn.action), Counter()), by_source[answer_source(turn)]):
            c["turns"] += 1
            c["exact"] += same
    first = len(details) if details is not None else 0
    report = score(model, list(turns), list(answers), judge, details)
    if scores is not None:
        scores.extend({k: v for k, v in report.per_turn[t.id].items() if k in SCORE_KEYS} for t in turns)
    if details is not None:
        for entry, same in zip(details[first:], matched, strict=True):
            entry["exact"] = bool(same)
    return {
        "turns": len(turns),
        "answered": sum(1 for a in answers if a is not None),
        "exact_match": _share(exact, len(turns)),
        "error_flag_agreement": _share(agree, len(turns)),
        "judge_overall": report.pooled.get("overall"),
        "judge_factuality": report.pooled.get("factuality"),
        "judge_scored": report.scored,
        "exact_by_action": {
            label: _exact(c) for label, c in sorted(by_action.items(), key=lambda item: (-item[1]["turns"], item[0]))
        },
        "exact_by_source": {source: _exact(c) for source, c in by_source.items()},
    }


def success_confusion(pairs: Sequence[tuple[bool | None, bool | None]]) -> dict:
    """(real success, simulated success) per task -> {"real <label>": {"simulated <label>": n}}, and the share of
    agreement over the pairs the simulator decided (a simulated episode that says nothing of success is
    counted apart, as undecided)."""
    counts = Counter(pairs)
    matrix = {
        f"real {SUCCESS_LABELS[r]}": {f"simulated {SUCCESS_LABELS[s]}": counts[(r, s)] for s in (True, False, None)}
        for r in (True, False, None)
    }
    decided = [(r, s) for r, s in pairs if r is not None and s is not None]
    return {
        "episodes": len(pairs),
        "decided": len(decided),
        "agreement": _share(sum(r == s for r, s in decided), len(decided)),
        "real_outcomes": {"success": sum(r for r, _ in decided), "failure": sum(not r for r, _ in decided)},
        "matrix": matrix,
    }


def one_sided(real_outcomes: Mapping | None) -> str | None:
    """Why the agreement of a `success_confusion` with these `real_outcomes` decides nothing, or None: when the
    decided real episodes all ended one way, a world model that always predicts that outcome agrees on every one."""
    if not real_outcomes or bool(real_outcomes["success"]) == bool(real_outcomes["failure"]):
        return None  # none decided (no agreement at all) or both outcomes seen
    ended = "failed" if real_outcomes["failure"] else "succeeded"
    return f"the agent's real episodes all {ended}, so agreement only shows the world model predicts that too"


def replay_figures(episodes: Sequence[tuple[Sequence[Mapping], Sequence[Mapping], bool | None, bool | None]]) -> dict:
    """WM2Real over (simulated turns, real replayed turns, simulated success, real success of the replay): the
    share of replayed turns whose real observation equals the simulated one, and whose error flags agree (turns
    the replay never reached count as disagreeing), and of simulated successes the share that are real ones."""
    turns = exact = agree = 0
    claimed = confirmed = 0
    for simulated, real, sim_success, real_success in episodes:
        turns += len(simulated)
        for sim_turn, real_turn in zip(simulated, real, strict=False):
            predicted, actual = sim_turn["observation"], real_turn["observation"]
            exact += same_observation(predicted["content"], actual["content"])
            agree += predicted_error(predicted["content"]) == real_error(actual)
        if sim_success:
            claimed += 1
            confirmed += bool(real_success)
    return {
        "episodes": len(episodes),
        "turns": turns,
        "exact_match": _share(exact, turns),
        "error_flag_agreement": _share(agree, turns),
        "simulated_successes": claimed,
        "real_share_of_simulated_successes": _share(confirmed, claimed),
    }


def turn_agreement(turns: Sequence[PredictionTurn], answers: Sequence[str | None]) -> tuple[list[int], list[int]]:
    """Per turn, 1/0: whether the answer matched the real observation exactly, and whether its error flag agreed
    (an unanswered turn misses both), as `step_figures` counts them: what paired comparisons of rows read."""
    exact, flags = [], []
    for turn, answer in zip(turns, answers, strict=True):
        if answer is None:
            exact.append(0)
            flags.append(0)
            continue
        predicted = extract_prediction(answer).text
        exact.append(int(same_observation(predicted, turn.reference)))
        flags.append(int(predicted_error(predicted) == real_error(turn.observation or {"content": turn.reference})))
    return exact, flags
