"""A replay of the published evaluator's documented message building (infer: system_str, earlier prompt/response
pairs, the current prompt; judge: history context, the ground truth response[turn_idx-1] with its header cleaned),
written from that description, run on an exported folder and compared with what trajforge asks and judges."""

import json

from tests.builders import make_trajectory
from trajforge.evaluation.items import line_item
from trajforge.schemas.formats.agentworldbench import export_folder


def evaluator_infer_messages(job: dict) -> list[dict]:
    t = max(job.get("turn_idx", 1) - 1, 0)
    messages = [{"role": "system", "content": job["system_str"]}] if job.get("system_str") else []
    for j in range(t):
        messages += [
            {"role": "user", "content": job["prompt"][j]},
            {"role": "assistant", "content": job["response"][j]},
        ]
    return messages + [{"role": "user", "content": job.get("current_prompt") or job["prompt"][t]}]


def evaluator_judge_inputs(job: dict) -> tuple[str, str]:
    t = max(job.get("turn_idx", 1) - 1, 0)
    context = "".join(job["prompt"][i] + "\n" + job["response"][i] + "\n\n" for i in range(t))
    truth = job["response"][t]  # an IndexError here is what our old lines caused
    return context, truth.removeprefix("**Environment Observation:**\n")  # the header line, cleaned


def test_exported_lines_replay_through_the_evaluators_message_building(tmp_path):
    records = [make_trajectory(4, domain="terminal"), make_trajectory(3, domain="mcp")]
    export_folder(records, tmp_path)
    observations = {r.domain: [t.observation.content for t in r.turns] for r in records}
    count = 0
    for path in sorted(tmp_path.glob("*_test.jsonl")):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            job = json.loads(text)
            context, truth = evaluator_judge_inputs(job)
            assert truth == observations[job["task"]][job["turn_idx"] - 1]  # the truth it sees is our observation
            item = line_item(job, f"{path}:line {number}")
            assert [{"role": r, "content": c} for r, c in item.messages] == evaluator_infer_messages(job)
            assert item.reference == truth and item.case("x").history_text() == context
            count += 1
    assert count == 7
