"""Rule verifiers: checks derived from a real observation that a prediction must pass, per domain. Terminal:
the facts of stdout (first line, numbers, paths); MCP: the JSON result's error flag, field names and types,
ids; web: the accessibility-tree anchors (URL, title, focused element). Volatile values (timestamps, durations,
process ids, temporary names, random ids) are never checked: another run of the same action prints others.
Specs are plain JSON, stored with RL prompts by prepare-rl."""

import json

from trajforge.evaluation.facts import FACT
from trajforge.evaluation.volatile import mask, volatile_spans

MAX_FACTS = 8


def _facts(text: str) -> list[str]:
    """Stable facts only, in order: a fact that touches a volatile value is left out (the hour of a clock time
    is not a count)."""
    volatile = volatile_spans(text)
    seen: list[str] = []
    for match in FACT.finditer(text):
        if any(start < match.end() and match.start() < end for start, end in volatile):
            continue
        fact = match.group(0).strip("\"'")
        if len(fact) >= 2 and fact not in seen:
            seen.append(fact)
    return seen


def _json_fields(value, prefix: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            out[path] = type(item).__name__
            if isinstance(item, dict) and len(out) < 32:
                out.update(_json_fields(item, path))
        return out
    return {}


def derive_verifier(observation: dict, domain: str) -> dict | None:
    """A verifier spec for a real observation, or None where no rule can be derived."""
    content = observation["content"]
    fmt = observation.get("format", "text")
    if fmt == "json":
        try:
            payload = json.loads(content)
        except ValueError:
            return None
        spec: dict = {"kind": "json", "is_error": bool(observation.get("is_error"))}
        inner = payload
        if isinstance(payload, dict) and isinstance(payload.get("content"), list) and payload["content"]:
            try:  # an MCP result: the data is the JSON inside its first text part
                inner = json.loads(payload["content"][0].get("text", ""))
            except (ValueError, AttributeError):
                inner = None
        spec["fields"] = _json_fields(inner) if isinstance(inner, dict) else {}
        spec["facts"] = _facts(content)[:4]
        return spec
    if fmt == "aria":
        anchors = {}
        for line in content.splitlines()[:4]:
            for key in ("URL", "Title", "Focused"):
                if line.startswith(f"{key}: ") and not volatile_spans(line[len(key) + 2 :]):
                    anchors[key] = line[len(key) + 2 :]
        return {"kind": "aria", "anchors": anchors} if anchors else None
    lines = [line for line in content.splitlines() if line.strip()]
    if not lines and observation.get("exit_code") in (0, None):
        return {"kind": "text", "empty": True}
    facts = _facts(content)[:MAX_FACTS]
    first = mask(lines[0].strip())[:120] if lines else ""
    return {"kind": "text", "first_line": first, "facts": facts} if (first or facts) else None


def verify(spec: dict, prediction: str | None) -> bool:
    """Whether a predicted observation passes every rule of the spec."""
    if prediction is None:
        return False
    kind = spec.get("kind")
    if kind == "text":
        if spec.get("empty"):
            return not prediction.strip()
        first = mask(next((line.strip() for line in prediction.splitlines() if line.strip()), ""))
        return first[:120] == spec.get("first_line", first[:120]) and set(spec.get("facts", [])) <= set(
            _facts(prediction)
        )
    if kind == "aria":
        return all(f"{key}: {value}" in prediction for key, value in spec["anchors"].items())
    if kind == "json":
        try:
            payload = json.loads(prediction)
        except ValueError:
            return False
        if isinstance(payload, dict) and bool(payload.get("isError", False)) != spec["is_error"]:
            return False
        if not set(spec.get("facts", [])) <= set(_facts(prediction)):
            return False
        inner = payload
        if isinstance(payload, dict) and isinstance(payload.get("content"), list) and payload["content"]:
            try:
                inner = json.loads(payload["content"][0].get("text", ""))
            except (ValueError, AttributeError):
                inner = None
        fields = _json_fields(inner) if isinstance(inner, dict) else {}
        return all(fields.get(path) == kind_ for path, kind_ in spec.get("fields", {}).items())
    return False


__all__ = ["derive_verifier", "verify"]
