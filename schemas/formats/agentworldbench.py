"""AgentWorldBench JSONL, as the benchmark's own evaluator reads it: one evaluation turn per line.

A line: `task` (terminal, swe, mcp, search, web, os, android), `id`, `prompt[]` and `response[]` holding every
turn up to and including the current one ("### Turn N" action blocks; "**Environment Observation:**"
observation blocks), `current_prompt` (the current action again), `system_str` (the world model's system
prompt), `turn_idx` (1-based: `prompt[turn_idx-1]` is the action to predict, `response[turn_idx-1]` its real
observation) and `total_turns`. The evaluator loads every `*_test.jsonl` of a folder, so export writes one
`{task}_test.jsonl` per domain.

Import merges the lines of one trajectory (same task, id and system prompt; each line's lists a prefix of the
longest): the trajectory is the longest line's turns, every ground truth included.
"""

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.schemas.atomic import atomic_write
from trajforge.schemas.formats import ImportOptions, finish, imported_source, origin_of
from trajforge.schemas.hashing import content_hash
from trajforge.schemas.jsonl import iter_json_lines
from trajforge.schemas.records import DOMAINS, Trajectory, Turn
from trajforge.schemas.system_prompt import parse_system_prompt, render_system_prompt
from trajforge.schemas.validation import Problem, ReadResult

TASKS = ("terminal", "swe", "mcp", "search", "web", "os", "android")
FILE_SUFFIX = "_test.jsonl"
UNTAGGED = "simulation_instruction"  # an imported system_str is the world model's prompt, kept verbatim
OBSERVATION_HEADER = "**Environment Observation:**\n"
_TURN_HEADER = re.compile(r"^### Turn \d+\n")
_ACTION_HEADER = "**Action:**\n"
_OWN_HEADER = re.compile(r"^\*\*[^*\n]+:\*\*\n")  # a block with its own header, like **Task Instruction:**
_FENCE = re.compile(r"^```(json|bash)\n(.*)\n```$", flags=re.DOTALL)

# The world model's role per domain, written for trajforge's corpora: what environment it simulates. The
# agent's task is part of the initial state the world model starts from, not the world model's own task.
WORLD_MODEL_PROMPTS = {
    "terminal": "You are a world model of a Linux terminal. The user sends shell commands (or keystrokes) one "
    "turn at a time; you answer with exactly what the terminal prints, given everything run before.",
    "swe": "You are a world model of a software repository in a development container. The user sends shell "
    "commands, file views and edits, and test runs; you answer with exactly what the environment returns.",
    "mcp": "You are a world model of MCP tool servers. The user sends tool calls (name and JSON arguments); you "
    "answer with exactly the result the server returns, as JSON, errors included.",
    "search": "You are a world model of a search engine over a document collection. The user sends searches and "
    "page fetches; you answer with exactly the results or page text the engine returns.",
    "web": "You are a world model of a web browser. The user sends browser actions (navigate, click, type); you "
    "answer with the page the browser shows next, as an accessibility tree with URL, title and focus.",
    "os": "You are a world model of a desktop operating system. The user sends actions; you answer with the "
    "system's next observation.",
    "android": "You are a world model of an Android device. The user sends taps, typing and navigation; you "
    "answer with the next screen.",
}
ANSWER_FORMAT = (
    "Think inside <think></think> if you need to, then write the environment's exact output inside "
    "<predicted_observation></predicted_observation>."
)


# --- lines -----------------------------------------------------------------------------------------------------


@dataclass
class LineResult:
    """One benchmark line as read: valid, or the problems that name what is wrong."""

    source: str
    locator: str
    line: dict | None
    problems: list[Problem] = field(default_factory=list)
    raw: bytes | None = None

    @property
    def where(self) -> str:
        return f"{self.source}:{self.locator}"


def line_problems(value) -> list[Problem]:
    """What keeps a line from being evaluated as the benchmark's evaluator reads it."""
    if not isinstance(value, dict):
        return [Problem("", f"expected a JSON object, got {type(value).__name__}")]
    problems = []
    for key in ("prompt", "response"):
        items = value.get(key)
        if not isinstance(items, list):
            problems.append(
                Problem(key, "missing" if items is None else f"expected a list, got {type(items).__name__}")
            )
        elif not all(isinstance(x, str) for x in items):
            problems.append(Problem(key, "expected a list of strings"))
    for key in ("task", "system_str", "current_prompt"):
        if key in value and not isinstance(value[key], str):
            problems.append(Problem(key, f"expected a string, got {type(value[key]).__name__}"))
    if "task" not in value:
        problems.append(Problem("task", "missing"))
    turn = value.get("turn_idx")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        problems.append(Problem("turn_idx", f"expected an integer >= 1, got {turn!r}"))
    elif not problems and turn > min(len(value["prompt"]), len(value["response"])):
        problems.append(
            Problem(
                "turn_idx",
                f"{turn} is beyond its lists ({len(value['prompt'])} prompts, {len(value['response'])} responses): "
                "prompt[turn_idx-1] and response[turn_idx-1] must hold the current turn",
            )
        )
    return problems


def benchmark_files(path: str | Path) -> list[Path]:
    """A file, or every `*_test.jsonl` of a folder (what the evaluator loads)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob(f"*{FILE_SUFFIX}"))
        if not files:
            raise FileNotFoundError(f"{path}: no *{FILE_SUFFIX} files")
        return files
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    return [path]


def read_lines(path: str | Path) -> Iterator[LineResult]:
    for file in benchmark_files(path):
        for line in iter_json_lines(file):
            problems = line.problems or line_problems(line.value)
            yield LineResult(str(file), line.locator, None if problems else line.value, problems, line.raw)


def subtask(line: dict) -> str:
    task = line.get("task", "mcp")
    return task.split("/")[-1]


def current_action(line: dict) -> str:
    return line.get("current_prompt") or line["prompt"][line["turn_idx"] - 1]


def parse_observation(block: str) -> str:
    return block.removeprefix(OBSERVATION_HEADER)


def ground_truth(line: dict) -> str:
    return parse_observation(line["response"][line["turn_idx"] - 1])


# --- actions ---------------------------------------------------------------------------------------------------


def parse_action(block: str) -> dict:
    text = _TURN_HEADER.sub("", block, count=1)
    if not text.startswith(_ACTION_HEADER):
        return {"kind": "message", "content": text}
    text = text.removeprefix(_ACTION_HEADER)
    fence = _FENCE.match(text)
    if fence and fence.group(1) == "bash":
        return {"kind": "shell", "content": fence.group(2)}
    if fence:
        try:
            call = json.loads(fence.group(2))
        except ValueError:
            return {"kind": "message", "content": text}
        if isinstance(call, dict) and isinstance(call.get("name"), str) and "arguments" in call:
            return {
                "kind": "tool_call",
                "name": call["name"],
                "content": json.dumps(call["arguments"], ensure_ascii=False),
            }
        return {"kind": "tool_call", "content": fence.group(2)}
    return {"kind": "message", "content": text}


def format_action(turn: Turn) -> str:
    action = turn.action
    if action.kind == "shell":
        body = f"```bash\n{action.content}\n```"
    elif action.kind == "tool_call" and action.name:
        try:
            arguments = json.loads(action.content)
        except ValueError:
            arguments = action.content
        body = "```json\n" + json.dumps({"name": action.name, "arguments": arguments}, ensure_ascii=False) + "\n```"
    else:
        body = action.content
    header = "" if action.kind == "message" and _OWN_HEADER.match(body) else _ACTION_HEADER
    return f"### Turn {turn.index + 1}\n{header}{body}"


def format_observation(turn: Turn) -> str:
    return OBSERVATION_HEADER + turn.observation.content


# --- import ----------------------------------------------------------------------------------------------------


def _covers(longer: dict, shorter: dict) -> bool:
    n = shorter["turn_idx"]
    return longer["prompt"][:n] == shorter["prompt"][:n] and longer["response"][:n] == shorter["response"][:n]


def convert(value: dict, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    """A line -> the trajectory of its turns 1..turn_idx, the last one's observation its ground truth."""
    problems = line_problems(value)
    if problems:
        return None, problems
    n, task = value["turn_idx"], subtask(value)
    turns = [
        {"index": i, "action": parse_action(p), "observation": {"content": parse_observation(o), "format": "text"}}
        for i, (p, o) in enumerate(zip(value["prompt"][:n], value["response"][:n], strict=True))
    ]
    kept = {"id": value.get("id"), "task": value.get("task"), "total_turns": value.get("total_turns")}
    return {
        "schema_version": "1",
        "domain": options.domain or (task if task in DOMAINS else "other"),
        "source": imported_source("agentworldbench", origin, options),
        "environment": {"name": options.environment or f"agentworldbench-{task}"},
        **parse_system_prompt(value.get("system_str", ""), untagged_part=UNTAGGED),
        "agent": {"name": "unknown"},
        "turns": turns,
        "metadata": json.dumps({"agentworldbench": kept}, ensure_ascii=False),
    }, []


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    """Every line checked; the lines of one trajectory merged into it (the longest line holds the others)."""
    valid: list[tuple[str, dict]] = []
    for line in iter_json_lines(Path(path)):
        problems = line.problems or line_problems(line.value)
        if problems:
            yield ReadResult(str(path), line.locator, None, problems, line.raw)
        else:
            valid.append((line.locator, line.value))
    kept: list[tuple[str, dict]] = []
    for locator, value in sorted(valid, key=lambda lv: -lv[1]["turn_idx"]):
        key = (value.get("task"), value.get("id"), value.get("system_str"))
        if not any((o.get("task"), o.get("id"), o.get("system_str")) == key and _covers(o, value) for _, o in kept):
            kept.append((locator, value))
    order = {locator: i for i, (locator, _) in enumerate(valid)}
    for locator, value in sorted(kept, key=lambda lv: order[lv[0]]):
        record, problems = finish(*convert(value, origin_of(path, locator), options), options)
        yield ReadResult(str(path), locator, record, problems, None)


# --- export ----------------------------------------------------------------------------------------------------


def _metadata(record: Trajectory) -> dict:
    try:
        return json.loads(record.metadata or "{}").get("agentworldbench") or {}
    except (ValueError, AttributeError):
        return {}


def system_str(record: Trajectory) -> str:
    """An imported prompt verbatim; else the domain's world-model prompt, then the environment: action space and
    initial state, the agent's task instruction part of that state."""
    parts = record.model_dump()
    if not any(parts[p] for p in ("task_description", "initial_state", "demonstrations")) and parts[UNTAGGED]:
        if parts["action_space"] in ("", "[]"):
            return parts[UNTAGGED]
    state = "\n\n".join(
        x
        for x in (
            f"The agent's task: {parts['task_description']}" if parts["task_description"] else "",
            parts["initial_state"],
        )
        if x
    )
    environment = render_system_prompt({**parts, "task_description": "", "initial_state": state})
    head = f"{WORLD_MODEL_PROMPTS.get(record.domain, WORLD_MODEL_PROMPTS['terminal'])} {ANSWER_FORMAT}"
    return f"{head}\n\n{environment}" if environment else head


def to_lines(record: Trajectory, turn_indices: Iterable[int] | None = None) -> Iterator[dict]:
    """One benchmark line per chosen turn (all by default)."""
    meta = _metadata(record)
    system = system_str(record)
    line_id = meta.get("id", int(content_hash(record.trajectory_id, 13), 16))
    total = meta.get("total_turns") or len(record.turns)
    task = meta.get("task") or record.domain
    prompts = [format_action(t) for t in record.turns]
    responses = [format_observation(t) for t in record.turns]
    for k in turn_indices if turn_indices is not None else range(len(record.turns)):
        yield {
            "task": task,
            "id": line_id,
            "prompt": prompts[: k + 1],
            "response": responses[: k + 1],
            "current_prompt": prompts[k],
            "system_str": system,
            "turn_idx": k + 1,
            "total_turns": total,
        }


@dataclass
class ExportSummary:
    lines: Counter = field(default_factory=Counter)  # task -> lines written
    skipped: Counter = field(default_factory=Counter)  # domain outside the benchmark's tasks -> trajectories

    @property
    def count(self) -> int:
        return sum(self.lines.values())


def export_folder(
    records: Iterable[tuple[Trajectory, Iterable[int] | None]] | Iterable[Trajectory], folder: str | Path
) -> ExportSummary:
    """`{task}_test.jsonl` per domain in `folder`; trajectories of other domains are skipped and counted. Items are
    records (every turn) or (record, turn indices)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder}: the AgentWorldBench export is a folder of *{FILE_SUFFIX} files, not a file")
    folder.mkdir(parents=True, exist_ok=True)
    summary = ExportSummary()
    by_task: dict[str, list[str]] = {}
    for item in records:
        record, turns = item if isinstance(item, tuple) else (item, None)
        if record.domain not in TASKS:
            summary.skipped[record.domain] += 1
            continue
        for line in to_lines(record, turns):
            by_task.setdefault(record.domain, []).append(json.dumps(line, ensure_ascii=False))
            summary.lines[record.domain] += 1
    for stale in folder.glob(f"*{FILE_SUFFIX}"):
        if stale.name.removesuffix(FILE_SUFFIX) not in by_task:
            stale.unlink()
    for task, lines in by_task.items():
        with atomic_write(folder / f"{task}{FILE_SUFFIX}", "w") as f:
            f.write("".join(line + "\n" for line in lines))
    return summary


def write(records: Iterable[Trajectory], path: str | Path) -> int:
    return export_folder(records, path).count
