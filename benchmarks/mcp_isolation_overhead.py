"""What isolating a stdio MCP server costs: per tool call and per episode start, isolated (the server in its
episode container, over `docker exec -i`) against host (a child process), both measured in this run, interleaved.

    .venv/bin/python benchmarks/mcp_isolation_overhead.py [--calls 200] [--starts 5] [--server kvstore]

Target: median added per call < 5 ms. The episode start (container, server start, MCP handshake,
tools/list) is reported, with its part that is the container alone.
"""

import argparse
import dataclasses
import statistics
import time

import docker
from results_record import add_results_option, start_record

from trajforge.sandboxes.base import Task
from trajforge.sandboxes.bundled_servers import bundled_server
from trajforge.sandboxes.image import ensure_base_image
from trajforge.sandboxes.mcp_container import Isolation
from trajforge.sandboxes.mcp_env import MCPEnvironment
from trajforge.schemas.records import Action

TASK = Task(id="bench", instruction="benchmark", domain="mcp")
CALL = {"kvstore": ("get", '{"key": "db/host"}'), "issues": ("get_issue", '{"number": 1}')}


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def p90_ms(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=10)[-1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200, help="tool calls per mode, interleaved in rounds of 10")
    parser.add_argument("--starts", type=int, default=5, help="episode starts per mode")
    parser.add_argument("--server", choices=sorted(CALL), default="kvstore")
    add_results_option(parser)
    args = parser.parse_args()
    record = start_record("mcp-isolation-overhead", args)
    client = docker.from_env()
    image = ensure_base_image(client, log=lambda m: None)
    isolation = Isolation(image=image, run_id="benchmark", client=client)
    server = bundled_server(args.server)
    modes = {"host": dataclasses.replace(server, isolation="host"), "isolated": server}
    tool, arguments = CALL[args.server]
    action = Action(kind="tool_call", name=tool, content=arguments)

    starts: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(args.starts):
        for mode, config in modes.items():
            with MCPEnvironment(config, isolation=isolation) as env:
                tick = time.perf_counter()
                env.reset(TASK)
                starts[mode].append(time.perf_counter() - tick)

    calls: dict[str, list[float]] = {m: [] for m in modes}
    envs = {mode: MCPEnvironment(config, isolation=isolation) for mode, config in modes.items()}
    try:
        for env in envs.values():
            env.reset(TASK)
            for _ in range(5):  # warm up
                env.step(action)
        for _ in range(max(1, args.calls // 10)):
            for mode, env in envs.items():
                for _ in range(10):
                    tick = time.perf_counter()
                    observation = env.step(action)
                    calls[mode].append(time.perf_counter() - tick)
                    assert not observation.is_error, observation.content
    finally:
        for env in envs.values():
            env.close()

    container_only = []
    for _ in range(args.starts):
        tick = time.perf_counter()
        container = client.containers.run(image, ["true"], network_mode="none", detach=True)
        container.wait()
        container.remove(force=True)
        container_only.append(time.perf_counter() - tick)

    print(f"server {args.server}, tool {tool}, image {image}")
    for mode in modes:
        print(
            f"  {mode:8s} per call: median {median_ms(calls[mode]):7.2f} ms, p90 {p90_ms(calls[mode]):7.2f} ms "
            f"({len(calls[mode])} calls); episode start: median {median_ms(starts[mode]):7.0f} ms ({args.starts})"
        )
    added = median_ms(calls["isolated"]) - median_ms(calls["host"])
    start_added = median_ms(starts["isolated"]) - median_ms(starts["host"])
    print(f"  added per call by isolation: {added:+.2f} ms median; target < 5 ms: {'met' if added < 5 else 'NOT met'}")
    print(
        f"  added per episode start: {start_added:+.0f} ms median "
        f"(a bare `docker run true` takes {median_ms(container_only):.0f} ms here)"
    )
    record.write({"calls_s": calls, "starts_s": starts, "bare_container_s": container_only})


if __name__ == "__main__":
    main()
