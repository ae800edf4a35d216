"""Builders of test data: records and turns made in one line, imported by any test that needs them. Fixtures
stay in conftest.py."""

import json
from pathlib import Path

from trajforge.sandboxes.simulated import WorldModel
from trajforge.schemas.records import Trajectory, new_trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "schemas" / "examples"
# Every import format's own file in EXAMPLES, and the locators of the records it holds.
FORMAT_SAMPLES = {
    "chat": ("chat.jsonl", ["line 1", "line 2", "line 3"]),
    "atif": ("atif_terminal.json", ["file"]),
    "agentworldbench": ("agentworldbench.jsonl", ["line 1", "line 2"]),
    "adp": ("adp_handwritten.json", ["file [0]", "file [1]", "file [2]"]),
    "openhands": ("openhands_events_handwritten.jsonl", ["line 1", "line 2"]),
    "swe-agent": ("swe_agent.traj", ["file"]),
    "mini-swe-agent": ("mini_swe_agent.traj.json", ["file"]),
    "asciinema": ("asciinema.cast", ["file"]),
    "chat-tools": ("chat_tools_handwritten.jsonl", ["line 1", "line 2"]),
}


def make_trajectory(n_turns: int = 3, domain: str = "terminal", **overrides) -> Trajectory:
    turns = [
        {
            "index": i,
            "action": {"kind": "shell", "content": f"echo step {i}"},
            "observation": {"content": f"step {i}\n", "exit_code": 0, "metadata": json.dumps({"cwd": "/work"})},
            "latency_ms": 3.5,
        }
        for i in range(n_turns)
    ]
    fields = {
        "domain": domain,
        "source": {"kind": "collected", "by": "scripted", "run_id": "run-1"},
        "environment": {"name": "terminal", "image_digest": "sha256:abc", "backend": "docker"},
        "task_description": "Print the steps.",
        "action_space": json.dumps([{"name": "shell", "input_schema": {"type": "string"}}]),
        "agent": {"name": "scripted"},
        "turns": turns,
        "outcome": {"status": "success", "reward": 1.0},
        "started_at": "2026-11-30T02:00:00Z",
    }
    fields.update(overrides)
    return new_trajectory(**fields)


def report_turns(tail: str, n: int = 16) -> list[dict]:
    """Turns of a long, repetitive trajectory; two that differ only in `tail` are near-duplicates."""
    turns = [
        {
            "index": j,
            "action": {"kind": "shell", "content": f"grep -n total report{j}.csv"},
            "observation": {"content": f"{j}: total revenue for region {j} was recorded in the ledger"},
        }
        for j in range(n)
    ]
    turns[-1]["observation"]["content"] = tail
    return turns


def record_dict(record: Trajectory) -> dict:
    """The record as it appears in a raw segment."""
    return json.loads(record.model_dump_json(exclude_none=True))


class ScriptedWorldModel(WorldModel):
    """Answers from a list, in order (the last one again once they run out), keeping every conversation asked."""

    name = "scripted-world-model"

    def __init__(self, *answers: str, prompt: str = "template"):
        self.answers, self.prompt, self.asked = list(answers), prompt, []

    def answer(self, messages, seed):
        self.asked.append(messages)
        return self.answers[min(len(self.asked) - 1, len(self.answers) - 1)]


def tagged(text: str) -> str:
    return f"<think>the file has five lines</think><predicted_observation>\n{text}\n</predicted_observation>"


def simulation_of(world_model: str, **settings):
    """A collectors.simulation.Simulation of `world_model` as the command line names it (URL=MODEL, a folder)."""
    from trajforge.collectors.simulation import Simulation
    from trajforge.endpoints.model_ref import parse_model

    return Simulation(parse_model(world_model, "--world-model"), **settings)


def agent_rl_of(**fields):
    """An agents.config.AgentRLConfig from its fields and its episodes' (CollectConfig) fields, named flat."""
    import dataclasses

    from trajforge.agents.config import AgentRLConfig
    from trajforge.collectors.config import CollectConfig

    episode_fields = {f.name for f in dataclasses.fields(CollectConfig)}
    run = {name: fields.pop(name) for name in list(fields) if name in episode_fields and name != "output"}
    return AgentRLConfig(**fields, run=dataclasses.replace(AgentRLConfig.run, **run))


def dataset_chat_rows(n: int) -> list[dict]:
    """Chat conversations as a dataset's rows (an `id` and a `messages` column); rows 7, 57, 107, ... cannot be
    read (a user message with no reply) and row 30 has an unknown role."""
    rows = []
    for i in range(n):
        messages = [
            {"role": "system", "content": "You are a Linux shell."},
            {"role": "user", "content": f"echo {i} | wc -c"},
            {"role": "assistant", "content": f"{len(str(i)) + 1}\n"},
        ]
        if i % 50 == 7:
            messages = messages[:2]
        if i == 30:
            messages[1]["role"] = "robot"
        rows.append({"id": i, "messages": messages})
    return rows


def write_dataset(rows: list[dict], folder: Path, files: int = 3) -> list[Path]:
    """ROWS as a dataset's parquet files, as the Hub holds them (FOLDER/data/train-0000i-of-0000n.parquet), in
    several row groups each; and the same values as JSON Lines, FOLDER/lines/train-0000i-of-0000n.jsonl."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for sub in ("data", "lines"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    per_file = -(-len(rows) // files)
    paths = []
    for i in range(files):
        part = rows[i * per_file : (i + 1) * per_file]
        path = folder / "data" / f"train-{i:05d}-of-{files:05d}.parquet"
        pq.write_table(pa.Table.from_pylist(part), path, row_group_size=40)
        (folder / "lines" / f"{path.stem}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in part))
        paths.append(path)
    return paths
