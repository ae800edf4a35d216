"""Per-action overhead of the persistent shell against a fresh `docker exec`, both measured in this run.

    .venv/bin/python benchmarks/terminal_overhead.py [--runs 200]

Target: median <= 10 ms for `true` in the persistent session (about 60 ms for `docker exec`).
"""

import argparse
import statistics
import subprocess
import time

import docker
from results_record import add_results_option, start_record

from trajforge.sandboxes.base import Task
from trajforge.sandboxes.image import ensure_base_image
from trajforge.sandboxes.terminal import DockerTerminal
from trajforge.schemas.records import Action


def timed(fn, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    add_results_option(parser)
    args = parser.parse_args()
    record = start_record("terminal-overhead", args)
    client = docker.from_env()
    image = ensure_base_image(client, log=lambda m: None)
    with DockerTerminal(image=image, run_id="benchmark", client=client) as env:
        env.reset(Task(id="bench", instruction="benchmark"))
        action = Action(kind="shell", content="true")
        env.step(action)  # warm up
        persistent = timed(lambda: env.step(action), args.runs)
        cid = env.container.id
        exec_runs = max(20, args.runs // 5)
        fresh = timed(lambda: subprocess.run(["docker", "exec", cid, "true"], check=True), exec_runs)
    p, f = statistics.median(persistent), statistics.median(fresh)
    print(
        f"persistent shell: median {p:.2f} ms, "
        f"p90 {statistics.quantiles(persistent, n=10)[-1]:.2f} ms ({args.runs} runs)"
    )
    print(
        f"fresh docker exec: median {f:.2f} ms, p90 {statistics.quantiles(fresh, n=10)[-1]:.2f} ms ({exec_runs} runs)"
    )
    print(f"ratio: persistent is {f / p:.0f}x faster; target median <= 10 ms: {'met' if p <= 10 else 'NOT met'}")
    record.write({"persistent_ms": persistent, "fresh_exec_ms": fresh})


if __name__ == "__main__":
    main()
