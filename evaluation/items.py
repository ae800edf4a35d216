"""Benchmark items, from AgentWorldBench lines (prompted exactly as the benchmark's evaluator prompts: the line's
`system_str`, one user/assistant pair per earlier turn with the `prompt[i]`/`response[i]` strings verbatim, then
the current prompt; no truncation) or from corpus trajectories (the turns `sample_turns` picks, prompted in
trajforge's own chat format, which is how trajforge's models were trained)."""

from trajforge.evaluation.benchmark import Item, sample_turns
from trajforge.schemas.formats.agentworldbench import current_action, ground_truth, subtask


def line_item(line: dict, where: str) -> Item:
    """The one turn a benchmark line asks for: `turn_idx`."""
    t = line["turn_idx"] - 1
    prompts, responses = line["prompt"], line["response"]
    system = line.get("system_str", "")
    messages = (("system", system),) if system else ()
    for j in range(t):
        messages += (("user", prompts[j]), ("assistant", responses[j]))
    action = current_action(line)
    reference = ground_truth(line)
    return Item(
        id=where,
        domain=subtask(line),
        messages=(*messages, ("user", action)),
        history=tuple(zip(prompts[:t], responses[:t], strict=True)),
        action=action,
        reference=reference,
        observation={"content": reference},
    )


def corpus_items(rows, plain: bool) -> list[Item]:
    """The sampled turns of corpus rows (`plain`: the system prompt as CPT renders it, no reasoning template)."""
    from trajforge.training.prompts import build_query

    items = []
    for row in rows:
        for index in sample_turns(len(row["turns"])):
            query = build_query(row, index, plain=plain)
            case = query.case(None)
            items.append(
                Item(
                    id=f"{row['trajectory_id']}:{index}",
                    domain=query.domain,
                    messages=query.messages,
                    history=case.history,
                    action=query.action,
                    reference=query.reference,
                    observation=row["turns"][index]["observation"],
                )
            )
    return items
