"""Our GSPO reward as a function other trainers call: verl's `compute_score(data_source, solution_str, ground_truth,
extra_info)` and TRL's `trl_reward(completions, **kwargs) -> list[float]`. Both score through `row_reward`
(training/rewards.py), the function `train rl` calls on every sample: the same extractor and format gate
(no `<predicted_observation>` block, no reward), the same verifiers, judge 9 : verifier 1, on the same 0-25 scale.

The judge is the one `train rl --judge ...` would use, named by environment variables (TRAJFORGE_JUDGE,
TRAJFORGE_JUDGE_URL, TRAJFORGE_JUDGE_MODEL, TRAJFORGE_JUDGE_KEY_ENV, TRAJFORGE_RUBRICS, TRAJFORGE_JUDGE_TIMEOUT) or by
a JSON file that TRAJFORGE_JUDGE_CONFIG names (keys: kind, url, model, key_env, rubrics, timeout, retries); with
neither, the embedded judge, as in `train`. Each process builds it once.

A sample that cannot be scored (no extra_info, messages that are not a conversation ending in the action, a verifier
that is not JSON, a completion that is not text) scores 0 and never raises: the reason goes to the
`trajforge.reward` logger, and `score_sample` returns it. Bad judge settings do raise, naming the setting: they
would score every sample wrong."""

import functools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from trajforge.evaluation.factory import JudgeSpec
from trajforge.evaluation.judge import Judge
from trajforge.training.rewards import Reward, row_reward

log = logging.getLogger("trajforge.reward")

CONFIG_ENV = "TRAJFORGE_JUDGE_CONFIG"
# JudgeSpec field -> the variable that sets it (url and model: the variables `--judge-url`/`--judge-model` read too)
JUDGE_ENV = {
    "kind": "TRAJFORGE_JUDGE",
    "url": "TRAJFORGE_JUDGE_URL",
    "model": "TRAJFORGE_JUDGE_MODEL",
    "key_env": "TRAJFORGE_JUDGE_KEY_ENV",
    "rubrics": "TRAJFORGE_RUBRICS",
    "timeout": "TRAJFORGE_JUDGE_TIMEOUT",
}
_NUMBERS = {"timeout": float, "retries": int}


def judge_spec_from_env(environ: Mapping[str, str] = os.environ, config: str | None = None) -> JudgeSpec:
    """The judge settings: the JSON file `config` (else the one TRAJFORGE_JUDGE_CONFIG names), else the variables of
    JUDGE_ENV. A file that cannot be read, or a key it should not have, is a ValueError naming it."""
    path = config or environ.get(CONFIG_ENV)
    if path:
        try:
            values = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"judge config {path}: not a readable JSON file ({exc})") from exc
        known = {f.name for f in fields(JudgeSpec)}
        if not isinstance(values, dict) or set(values) - known:
            extra = sorted(set(values) - known) if isinstance(values, dict) else "not an object"
            raise ValueError(f"judge config {path}: unknown keys {extra} (known: {', '.join(sorted(known))})")
    else:
        values = {name: environ[var] for name, var in JUDGE_ENV.items() if environ.get(var)}
    try:
        return JudgeSpec(**{k: _NUMBERS[k](v) if k in _NUMBERS else v for k, v in values.items()})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"judge settings {values}: {exc}") from exc


@functools.lru_cache(maxsize=8)
def _judge_for(spec: JudgeSpec) -> Judge:
    return spec.build()


def current_judge(config: str | None = None) -> Judge:
    """The judge the environment (or the JSON file `config`) names, built once per process."""
    return _judge_for(judge_spec_from_env(config=config))


@dataclass(frozen=True)
class Scored:
    score: float  # the GSPO reward (0-25); 0 for a sample that could not be scored
    reward: Reward | None  # its parts (judge, verifier); None when the sample could not be scored
    reason: str | None = None  # why it scored 0 without being judged, or why the judge gave no scores


def _as_list(value: Any) -> list | None:
    # Parquet readers hand lists back as lists, tuples or numpy arrays; a string is not a list of messages.
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__len__"):
        return None
    return list(value.tolist() if hasattr(value, "tolist") else value)


def _message_problem(messages: list) -> str | None:
    pairs = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            return f"messages[{i}]: expected {{'role': str, 'content': str}}, got {str(m)[:80]!r}"
        pairs.append(m["role"])
    roles = pairs[1:] if pairs and pairs[0] == "system" else pairs
    expected = ["user" if i % 2 == 0 else "assistant" for i in range(len(roles))]
    if not roles or roles != expected or roles[-1] != "user":
        return f"messages: expected [system,] user, assistant, ..., user (the action to answer), got roles {pairs}"
    return None


def sample_problem(domain: Any, messages: Any, reference: Any, verifier: Any, answer: Any) -> str | None:
    """What keeps a sample from being scored, or None."""
    for name, value in (("answer", answer), ("reference", reference), ("domain", domain)):
        if not isinstance(value, str):
            return f"{name}: expected text, got {type(value).__name__}"
    listed = _as_list(messages)
    if listed is None:
        return f"messages: expected a list of chat messages, got {type(messages).__name__}"
    if problem := _message_problem(listed):
        return problem
    if verifier is not None and not isinstance(verifier, str | Mapping):
        return f"verifier: expected a JSON string or null, got {type(verifier).__name__}"
    if isinstance(verifier, str):
        try:
            if not isinstance(json.loads(verifier), dict):
                return "verifier: expected a JSON object"
        except ValueError as exc:
            return f"verifier: not JSON ({exc})"
    return None


def score_sample(
    domain: Any, messages: Any, reference: Any, verifier: Any, answer: Any, judge: Judge | None = None
) -> Scored:
    """One answer to one RL prompt, scored as `train rl` scores it; never raises on a malformed sample."""
    problem = sample_problem(domain, messages, reference, verifier, answer)
    if problem is not None:
        log.warning("reward 0 for a malformed sample: %s", problem)
        return Scored(0.0, None, problem)
    spec = json.dumps(dict(verifier)) if isinstance(verifier, Mapping) else verifier
    row = {"domain": domain, "messages": _as_list(messages), "reference": reference, "verifier": spec}
    try:
        reward = row_reward(judge or current_judge(), row, answer)
    except (KeyError, TypeError, ValueError) as exc:  # e.g. a verifier spec without the fields its kind needs
        reason = f"could not score: {exc!r}"
        log.warning("reward 0 for a malformed sample: %s", reason)
        return Scored(0.0, None, reason)
    failure = f"judge failure: {reward.judge_failure}" if reward.judge_failure else None
    return Scored(reward.total, reward, failure)


def compute_score(
    data_source: str, solution_str: str, ground_truth: str, extra_info: Mapping | None = None, **reward_kwargs
) -> float:
    """verl's reward function (`custom_reward_function.path` = this file, `name` = compute_score) for the rows of
    `trajforge export --format verl`: ground_truth is the real observation; extra_info carries the domain, the
    prompt messages (the judge reads the history) and the verifier. `reward_kwargs` may name `judge_config`, a JSON
    judge file (verl passes `custom_reward_function.reward_kwargs` here)."""
    if not isinstance(extra_info, Mapping):
        log.warning("reward 0 for a malformed sample from %s: extra_info: expected a mapping", data_source)
        return 0.0
    judge = current_judge(reward_kwargs.get("judge_config"))
    domain, messages, verifier = (extra_info.get(k) for k in ("domain", "messages", "verifier"))
    return score_sample(domain, messages, ground_truth, verifier, solution_str, judge).score


def _completion_text(completion: Any) -> Any:
    """A TRL completion as text: a string (standard format) or its assistant messages' content (conversational)."""
    listed = _as_list(completion)
    if listed is None or not all(isinstance(m, Mapping) for m in listed):
        return completion
    contents = [m.get("content") for m in listed if m.get("role", "assistant") == "assistant"]
    return "".join(contents) if all(isinstance(c, str) for c in contents) else None


def trl_reward(
    completions: Sequence,
    prompts: Sequence | None = None,
    reference: Sequence | None = None,
    verifier: Sequence | None = None,
    domain: Sequence | None = None,
    **kwargs,
) -> list[float]:
    """A TRL reward function (`GRPOTrainer(reward_funcs=trl_reward)`) for the rows of `trajforge export --format
    trl`'s grpo dataset: TRL passes each row's `prompt` as `prompts` and its other columns (reference, verifier,
    domain) by name, one value per completion. One float per completion."""
    n = len(completions)
    columns = {"prompts": prompts, "reference": reference, "verifier": verifier, "domain": domain}
    missing = [name for name, column in columns.items() if column is None or len(column) != n]
    if missing:
        log.warning("reward 0 for %d completions: columns %s missing or not one per completion", n, missing)
        return [0.0] * n
    judge = current_judge()
    return [
        score_sample(domain[i], prompts[i], reference[i], verifier[i], _completion_text(completions[i]), judge).score
        for i in range(n)
    ]
