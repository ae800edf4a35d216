"""Before `train agent-rl --world-model` trains: the world model's single-step figures on a corpus's validation
turns (sim-check's --part validation: a reading that decides whether to train is a choice, so it never reads the
test part; beside the two model-free baselines), printed, with a warning for each figure below what a
world model worth training in reaches (`below_thresholds`). Without a corpus there is nothing to measure on: a note
says so and training goes on."""

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from trajforge.agents.sim_check import SimCheckConfig, Thresholds, below_thresholds, check_simulator, world_model_of
from trajforge.agents.world_model import prompt_of
from trajforge.collectors.simulation import Simulation

Log = Callable[[str], None]


def world_model_figures(
    simulation: Simulation, corpus: str | None, thresholds: Thresholds, log: Log, warn: Log,
    limit: int | None = None, report: Path | None = None,
) -> dict | None:  # fmt: skip
    """sim-check's single-step result for the simulation's world model, its warnings under "below_thresholds";
    None (and a note) without a corpus. Written to `report` when given. The turns are asked as the simulator will
    ask them (the simulation's prompt: auto, plain or template; its --simulate-max-tokens)."""
    ref = simulation.world_model
    if corpus is None:
        log(f"world model {ref}: no --sim-check-corpus given, so its fidelity is not measured before training")
        return None
    with world_model_of(ref) as world:
        prompt = simulation.prompt if ref.endpoint is not None else prompt_of(world.ref.weights, simulation.prompt)
        sampling = dataclasses.replace(SimCheckConfig.sampling, max_tokens=simulation.max_tokens)
        config = SimCheckConfig(
            corpus=corpus, limit=limit, plain=prompt != "template", part="validation", episodes=False, sampling=sampling
        )  # a go/no-go reading: the validation part, never the test part
        result = check_simulator(config, world, log, warn)
    result["below_thresholds"] = below_thresholds(result, thresholds)
    result["thresholds"] = dataclasses.asdict(thresholds)
    for line in summary_lines(result):
        log(line)
    for line in result["below_thresholds"]:
        warn(f"warning: the world model's {line}: an agent may learn little in it")
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(json.dumps(result, indent=2) + "\n")
    return result


def summary_lines(result: dict) -> list[str]:
    """One line per model over all held-out turns: the world model first, then the baselines."""
    step = result["single_step"].get("all", {})
    lines = []
    for name, f in step.items():
        label = f"world model {name}" if name == result["world_model"] else f"  baseline {name}"
        factuality = f"{f['judge_factuality']:.1f}" if f.get("judge_factuality") is not None else "-"
        lines.append(
            f"{label}: exact match {_percent(f.get('exact_match'))}, error flag "
            f"{_percent(f.get('error_flag_agreement'))}, factuality {factuality} on {f['turns']} held-out turns"
        )
    return lines


def _percent(value: float | None) -> str:
    return f"{value:.1%}" if value is not None else "-"
