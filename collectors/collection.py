"""A collection run from one typed config: load and plan the suites, start what their environments need (the
Docker daemon and image, MCP server packages), run the episodes and write the manifest. `trajforge collect` is
this module behind flags."""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from trajforge.collectors.config import CollectConfig
from trajforge.collectors.environments import Settings, build_environment
from trajforge.collectors.environments.simulated import SimulatedSpec
from trajforge.collectors.grounding import ground_suites
from trajforge.collectors.policies import POLICIES
from trajforge.collectors.runner import RunResult, parse_shard, plan_episodes, run_collection
from trajforge.collectors.simulation import Simulation
from trajforge.collectors.tasks import Suite, SuiteError, load_faults, load_suite
from trajforge.collectors.writer import RunWriter
from trajforge.sandboxes.control import load_control
from trajforge.schemas import storage
from trajforge.schemas.hashing import config_hash

Log = Callable[[str], None]


class CollectSetupError(ValueError):
    """The run cannot start (no Docker daemon, an unreachable store): one line that says what to do."""


@dataclass
class Collected:
    run_id: str
    run_dir: str
    result: RunResult
    counts: dict[str, int]


def plan_suites(config: CollectConfig) -> list[Suite]:
    """The suites as this run sees them: faults added, simulated when asked, only the chosen tasks; ValueError
    (SuiteError) for anything wrong with them."""
    suites = [load_suite(s) for s in config.suites]
    if config.faults:
        fault_config = load_faults(config.faults)
        suites = [dataclasses.replace(s, faults=fault_config) for s in suites]
    if config.simulation is not None:
        suites = simulated_suites(suites, config.simulation)
    if config.tasks:
        unknown = set(config.tasks) - {name for s in suites for t in s.tasks for name in task_names(s, t)}
        if unknown:
            raise ValueError(f"unknown task ids: {', '.join(sorted(unknown))}")
        chosen = set(config.tasks)
        suites = [dataclasses.replace(s, tasks=tuple(t for t in s.tasks if chosen & task_names(s, t))) for s in suites]
    return suites


def simulated_suites(suites: list[Suite], simulation: Simulation) -> list[Suite]:
    """The suites in the simulation's world model, each carrying its control distribution (episodes sample their
    spec from it); not yet grounded (ground_simulated)."""
    control = load_control(simulation.control).model_dump(exclude_none=True) if simulation.control else None
    return [
        dataclasses.replace(s, environment=SimulatedSpec.standing_in(s.environment, simulation), control=control)
        for s in suites
    ]


def task_names(suite: Suite, task) -> set[str]:
    """What `--task` may call a task: its id, or its `task_name` for that suite's task alone."""
    return {task.id, task_name(suite, task)}


def task_name(suite: Suite, task) -> str:
    """`<suite>/<id>`: the task's name across suites (its episodes' keys add `#<repeat>`)."""
    return f"{suite.name}/{task.id}"


def in_world_model(suites: list[Suite], config: CollectConfig, run_id: str, log: Log) -> list[Suite]:
    """The suites simulated as `config.simulation` says, grounded and loaded (ground_simulated): how another runner
    of episodes (agent RL) puts its suites in a world model, as `collect --world-model` does."""
    return ground_simulated(simulated_suites(suites, config.simulation), config, run_id, log)


def ground_simulated(suites: list[Suite], config: CollectConfig, run_id: str, log: Log) -> list[Suite]:
    """Simulated suites with each task's real starting state (recorded from the real environment where needed:
    Docker started then), their world models loaded."""
    suites = ground_suites(suites, lambda: real_settings(config, run_id, log), log, config.concurrency)
    load_world_models(suites)
    return suites


def load_world_models(suites: list[Suite]) -> None:
    """Load each simulated suite's world model before the first episode: a checkpoint that cannot be loaded is a
    ValueError naming it, not an infra_error in every episode."""
    for suite in suites:
        if isinstance(suite.environment, SimulatedSpec):
            try:
                suite.environment.world_model()
            except (OSError, ValueError) as exc:
                spec = suite.environment
                raise ValueError(f"--world-model {spec.checkpoint or spec.url}: {exc}") from exc


def run_config(config: CollectConfig, suites: list[Suite], policy_args: dict, warn: Log) -> dict:
    """What the manifest records of the run (and its default id is a hash of): the kinds add their part."""
    recorded = {
        "suites": [s.name for s in suites],
        "tasks": sorted(config.tasks),
        "policy": config.policy,
        "policy_args": policy_args,
        "repeats": config.repeats,
        "max_turns": config.max_turns,
        "command_timeout": config.command_timeout,
        "seed": config.seed,
        "shard": config.shard,
        "faults": {s.name: s.faults for s in suites if s.faults},
        "simulate": None,
    }
    if config.simulation is not None:
        recorded |= config.simulation.recorded()
        if config.simulation.control:  # only when given: the default run ids of runs without it stay what they were
            recorded["control"] = next((s.control for s in suites if s.control), None)
    for kind in sorted({type(s.environment) for s in suites}, key=lambda k: k.__name__):
        notes, warnings = kind.run_notes({s.name: s.environment for s in suites if type(s.environment) is kind})
        recorded |= notes
        for warning in warnings:
            warn(warning)
    return recorded


# Over a Unix socket docker-py keeps one connection pool per URL (a container's, an exec's), 25 of them, and closes
# the least recently used even while a request holds one of its connections: at ~30 concurrent episodes a container
# start then failed inside urllib3 (AttributeError on the closed pool). Its `num_pools` is ignored but over SSH
# (docker 7.2), so the pools' container is replaced: room for every URL a run has in flight, and connections for
# the episodes that POST the same URL at once.
DOCKER_POOLS = 256
DOCKER_CONNECTIONS = 64


def docker_client():
    """The client every environment of a run shares, sized for many concurrent episodes (DOCKER_POOLS)."""
    import docker

    try:
        client = docker.from_env(max_pool_size=DOCKER_CONNECTIONS)
        adapter = getattr(client.api, "_custom_adapter", None)
        if hasattr(adapter, "pools"):
            adapter.pools = type(adapter.pools)(DOCKER_POOLS, dispose_func=lambda pool: pool.close())
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means no usable daemon
        raise CollectSetupError(
            f"no Docker daemon reachable ({exc}). Start it (e.g. `dockerd &`) and run again."
        ) from exc
    return client


def start_docker(image: str | None, log: Log):
    """The daemon, cleared of containers an earlier run left when it died, and the sandbox image."""
    from trajforge.sandboxes.containers import reap_stale
    from trajforge.sandboxes.image import ensure_base_image, image_digest

    client = docker_client()
    if reaped := reap_stale(client):
        log(f"removed {reaped} containers left by an earlier run that died")
    image = image or ensure_base_image(client, log=log)
    return client, {"image": image, "image_digest": image_digest(client, image)}


def real_settings(config: CollectConfig, run_id: str, log: Log) -> Settings:
    """The settings of the real environments a simulated run records starting states from (Docker started)."""
    client, docker_config = start_docker(config.image, log)
    return Settings(run_id, docker_config["image"], config.command_timeout, client)


def prepare_environments(suites: list[Suite], settings: Settings, warn: Log) -> bool:
    """What each suite's environment needs before its first episode; False if one failed (its episodes will end
    as infra_error, saying why; the others run)."""
    ok = True
    for suite in suites:
        if problem := suite.environment.prepare(settings, warn):
            warn(f"{suite.name}: {problem}")
            ok = False
    return ok


def collect(
    config: CollectConfig,
    log: Log,
    warn: Log,
    progress=lambda items, description, total: items,
    suites: list[Suite] | None = None,
) -> Collected:
    """Run the collection `config` describes (on `suites` as given, when given: e.g. tasks whose scripted actions
    replay other episodes); ValueError (SuiteError, CollectSetupError) before any episode runs."""
    suites = plan_suites(config) if suites is None else suites
    shard = parse_shard(config.shard)
    policy_class = POLICIES.get(config.policy)
    policy_args = policy_class.arguments(config)
    recorded = run_config(config, suites, policy_args, warn)
    client, image = None, config.image
    if any(s.environment.needs_docker() for s in suites):
        client, docker_config = start_docker(config.image, log)
        image, recorded = docker_config["image"], recorded | docker_config
    run_id = config.run_id or default_run_id(config, recorded)
    settings = Settings(run_id=run_id, image=image, command_timeout=config.command_timeout, docker_client=client)
    prepare_environments(suites, settings, warn)
    suites = ground_simulated(suites, config, run_id, log)  # simulated suites only

    def make_env(spec):
        return build_environment(spec.environment, settings, spec.faults, spec.seed, spec.control)

    if config.verify_generated:
        refuse_unsolved(suites, make_env, config, log)
    run_dir = storage.join(config.output, run_id)
    try:
        writer = RunWriter(run_dir, flush_every=config.flush_every)  # reads what an earlier run left there
    except storage.StorageError as exc:
        raise CollectSetupError(str(exc)) from exc
    episodes = plan_episodes(suites, config.repeats, shard, config.seed)
    result = run_collection(
        episodes,
        writer,
        make_env=make_env,
        make_policy=lambda: policy_class(**policy_args),
        run_id=run_id,
        concurrency=config.concurrency,
        retries=config.retries,
        max_turns=config.max_turns,
        progress=lambda items, total: progress(items, f"collecting {run_id}", total),
    )
    manifest = writer.write_manifest(recorded, len(episodes), {"seconds": round(result.seconds, 3)})
    return Collected(run_id, run_dir, result, manifest.counts)


def refuse_unsolved(suites: list[Suite], make_env, config: CollectConfig, log: Log) -> None:
    """SuiteError naming every generated task that its own scripted solution does not solve (nothing collected)."""
    from trajforge.collectors.verify import unsolved_generated

    log("verifying the generated tasks: each one's scripted solution against its check")
    problems = unsolved_generated(suites, make_env, config.concurrency, config.retries, config.max_turns)
    if problems:
        raise SuiteError(
            f"{len(problems)} generated task(s) fail their own scripted check, so nothing was collected:\n  "
            + "\n  ".join(problems)
        )


def default_run_id(config: CollectConfig, recorded: dict) -> str:
    shard = f"-shard{config.shard.replace('/', 'of')}" if config.shard != "0/1" else ""
    return f"{'+'.join(recorded['suites'])}-{config.policy}-{config_hash(recorded)[:8]}{shard}"
