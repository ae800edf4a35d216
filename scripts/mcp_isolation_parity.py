"""Collect MCP suites twice, with the server on the host and isolated in its episode container, and compare the
trajectories turn by turn: actions, observations (the work folder's path normalized), errors and outcomes.

    .venv/bin/python scripts/mcp_isolation_parity.py [--suite mcp-kvstore ...]   (default: the hand-written MCP suites)

Exit code 1 if any trajectory differs in more than the work folder's path.
"""

import argparse
import dataclasses
import re
import sys
import tempfile
from pathlib import Path

import docker

from trajforge.collectors.environments import Settings, build_environment
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.runner import plan_episodes, run_collection
from trajforge.collectors.tasks import SUITES_DIR, load_suite
from trajforge.collectors.writer import RunWriter
from trajforge.sandboxes.image import ensure_base_image
from trajforge.schemas.sources import read_records

# The host mode's per-episode temporary folder, and the container's /work: the same place, two names.
WORKDIR = re.compile(r"/tmp/trajforge-[\w.-]+?-[a-z0-9_]{8}|/work\b")


def bundled_mcp_suites() -> list[str]:
    """The hand-written bundled MCP suites: a generated one (thousands of tasks) is run by naming it with --suite."""
    suites = [load_suite(p.stem) for p in sorted(SUITES_DIR.glob("*.yaml"))]
    return [s.name for s in suites if s.environment.kind == "mcp" and not any(t.family for t in s.tasks)]


def collect(suite, isolation: str, settings: Settings, out: Path) -> dict:
    environment = suite.environment.model_copy(update={"isolation": isolation})
    suite = dataclasses.replace(suite, environment=environment)
    episodes = plan_episodes([suite], repeats=1)
    result = run_collection(
        episodes,
        RunWriter(out),
        lambda spec: build_environment(spec.environment, settings),
        ScriptedPolicy,
        f"parity-{isolation}",
        retries=0,
    )
    if result.infra_errors:
        print(f"  {isolation}: {result.infra_errors} infrastructure errors", file=sys.stderr)
    return {r.record.source.origin: r.record for r in read_records([out])}


def comparable(record) -> dict:
    return {
        "outcome": (record.outcome.status, record.outcome.reward, record.outcome.error),
        "turns": [
            (t.action.name, t.action.content, WORKDIR.sub("<workdir>", t.observation.content), t.observation.is_error)
            for t in record.turns
        ],
        "tools": record.action_space,
    }


def first_difference(host, isolated) -> str:
    if host is None or isolated is None:
        return "missing on the " + ("host" if host is None else "container") + " side"
    a, b = comparable(host), comparable(isolated)
    if a["outcome"] != b["outcome"]:
        return f"outcome host {a['outcome']} vs container {b['outcome']}"
    if a["tools"] != b["tools"]:
        return "the tools differ"
    for i, (x, y) in enumerate(zip(a["turns"], b["turns"], strict=False)):
        if x != y:
            return f"turn {i}: host {x[2][:300]!r} vs container {y[2][:300]!r}"
    return f"{len(a['turns'])} turns on the host, {len(b['turns'])} in the container"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", action="append", help="a suite name (repeatable); default: every bundled MCP suite")
    args = parser.parse_args()
    client = docker.from_env()
    settings = Settings(run_id="parity", image=ensure_base_image(client, log=print), docker_client=client)
    differ = 0
    with tempfile.TemporaryDirectory(prefix="trajforge-parity-") as tmp:
        for name in args.suite or bundled_mcp_suites():
            suite = load_suite(name)
            host = collect(suite, "host", settings, Path(tmp) / name / "host")
            isolated = collect(suite, "container", settings, Path(tmp) / name / "container")
            same = [k for k in host if k in isolated and comparable(host[k]) == comparable(isolated[k])]
            print(f"{name}: {len(same)}/{len(host)} trajectories identical up to the work folder's path")
            for key in sorted(set(host) | set(isolated)):
                if key not in same:
                    differ += 1
                    print(f"  DIFFERS {key}: {first_difference(host.get(key), isolated.get(key))}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
