"""Tool calls sampled from each tool's input JSON schema: valid calls grounded in what earlier observations
showed (ids, urls, names), and deliberately invalid ones (a missing required argument, a wrong type, an unknown
argument, a tool that does not exist), so a corpus also teaches how a server says no."""

import json
import random
import re
from typing import Any

from trajforge.schemas.records import Action

ID_LIKE = re.compile(r"^[\w.:/@-]{1,80}$")
ARIA_REF = re.compile(r"\[ref=(e\d+)\]")
ARIA_URL = re.compile(r"/url: (\S+)")
WORDS = ["alpha", "report", "draft", "todo", "2026-11-30", "test", "main", "notes"]
INVALID_KINDS = ("missing_required", "wrong_type", "unknown_argument", "unknown_tool")


class ToolCallSampler:
    def __init__(self, tools: list[dict], rng: random.Random, invalid_rate: float = 0.25, kind: str = "tool_call"):
        self.tools = [t for t in tools if t.get("name")]
        self.rng = rng
        self.invalid_rate = invalid_rate
        self.kind = kind  # "browser" for the browser's actions
        self.seen: list[str] = []  # short strings harvested from observations, newest last
        self.refs: list[str] = []  # element references of the last accessibility tree

    def learn(self, observation_text: str) -> None:
        if refs := ARIA_REF.findall(observation_text):
            self.refs = refs
            self.seen = [u for u in dict.fromkeys(ARIA_URL.findall(observation_text))] or self.seen
            return
        try:
            value = json.loads(observation_text)
        except ValueError:
            return
        for text in _strings(value):
            if ID_LIKE.match(text) and text not in self.seen:
                self.seen.append(text)
        del self.seen[:-200]

    def sample(self) -> Action:
        tool = self.rng.choice(self.tools)
        schema = tool.get("input_schema") or {"type": "object"}
        arguments = self.value(schema, depth=0)
        if not isinstance(arguments, dict):
            arguments = {}
        name = tool["name"]
        if self.rng.random() < self.invalid_rate:
            name, arguments = self._break(name, schema, arguments)
        return Action(kind=self.kind, name=name, content=json.dumps(arguments, ensure_ascii=False))

    def _break(self, name: str, schema: dict, arguments: dict) -> tuple[str, dict]:
        kind = self.rng.choice(INVALID_KINDS)
        required = list(schema.get("required", []))
        if kind == "missing_required" and required:
            arguments.pop(self.rng.choice(required), None)
        elif kind == "wrong_type" and arguments:
            key = self.rng.choice(sorted(arguments))
            arguments[key] = [] if isinstance(arguments[key], str) else "not-a-" + type(arguments[key]).__name__
        elif kind == "unknown_tool":
            name = f"{name}_v2"
        else:
            arguments["unexpected_argument"] = self.rng.choice(WORDS)
        return name, arguments

    def value(self, schema: dict, depth: int) -> Any:
        rng = self.rng
        if "enum" in schema:
            return rng.choice(schema["enum"])
        if "anyOf" in schema or "oneOf" in schema:
            options = [s for s in schema.get("anyOf", schema.get("oneOf", [])) if s.get("type") != "null"]
            return self.value(rng.choice(options), depth) if options else None
        kind = schema.get("type", "string")
        if isinstance(kind, list):
            kind = rng.choice([k for k in kind if k != "null"] or ["string"])
        if kind == "object":
            properties = schema.get("properties", {})
            required = set(schema.get("required", []))
            chosen = {k: v for k, v in properties.items() if k in required or rng.random() < 0.4}
            if not properties and depth < 2 and schema.get("additionalProperties", True) is not False:
                return {rng.choice(WORDS): self.value({"type": "string"}, depth + 1)} if rng.random() < 0.5 else {}
            return {
                k: self.rng.choice(self.refs) if k == "ref" and self.refs else self.value(v, depth + 1)
                for k, v in chosen.items()
            }
        if kind == "array":
            if depth >= 3:
                return []
            return [self.value(schema.get("items", {"type": "string"}), depth + 1) for _ in range(rng.randint(0, 2))]
        if kind == "integer":
            low, high = int(schema.get("minimum", 0)), int(schema.get("maximum", 10))
            return rng.randint(low, max(low, high))
        if kind == "number":
            return round(rng.uniform(float(schema.get("minimum", 0)), float(schema.get("maximum", 100))), 2)
        if kind == "boolean":
            return rng.random() < 0.5
        if self.seen and rng.random() < 0.7:
            return rng.choice(self.seen[-50:])
        return rng.choice(WORDS)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        try:  # tool results nest JSON inside text content
            inner = json.loads(value)
        except ValueError:
            return [value]
        return _strings(inner) if isinstance(inner, (dict, list)) else [value]
    if isinstance(value, dict):  # {"type": "text"} names a content part, it is not data
        return [s for k, v in value.items() if k != "type" for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
