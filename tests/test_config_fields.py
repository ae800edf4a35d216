"""No config copies another's fields (issue 53): a config holds the parts it shares with another as that part's own
type (GSPOConfig, a CollectConfig for episodes, a Simulation, a SplitConfig, a JudgeSpec: any dataclass held
whole), never field by field.
The test lists every config's own fields (a dataclass named *Config, and Simulation) and fails on a name that two
configs declare, unless it is below with the reason it is not a copy."""

import dataclasses
import importlib
import inspect
from collections import defaultdict

from tests.test_class_names import package_modules

# name -> why two configs may each declare it: every run has its own, with its own default, or the word means
# another thing in each
NOT_COPIES = {
    "output": "where each run writes, its own folder",
    "init": "the checkpoint each training run starts from",
    "data": "what each training stage reads",
    "seed": "each run's own seed",
    "max_steps": "each training run's length (its own default per stage)",
    "save_every": "each training run's checkpoints",
    "report_to": "each training run's metrics sink",
    "shard_bytes": "each Beam job's shard size",
    "temperature": "the sampling temperature of the models each config runs: the acting policy, the scored models, "
    "the GSPO policy",
    "lr": "the loop's peak rate under warmup and cosine decay; GSPO's constant rate",
    "clip": "the gradient norm of each optimizer: the loop's, GSPO's",
    "corpus": "the held-out turns each world-model evaluation reads: eval's, sim-check's single step",
    "limit": "how many held-out items each evaluation reads: trajectories, benchmark lines, tasks",
    "plain": "how each world-model evaluation prompts its held-out turns",
    "part": "which held-out part (validation, test) each evaluation reads: agent-eval's tasks, sim-check's",
    "held_out": "the share of TASKS held out (the split); the share of an SFT run's trajectories it validates on",
    "max_tokens": "a simulated observation's token budget; an evaluated answer's",
    "threshold": "MinHash similarity; the judge score a curated sample must reach",
    "tokenizer": "the tokenizer folder of each stage that counts or trains tokens",
}


def configs() -> dict[str, type]:
    found = {}
    for name in package_modules():
        for value in vars(importlib.import_module(name)).values():
            if inspect.isclass(value) and value.__module__ == name and dataclasses.is_dataclass(value):
                if value.__name__.endswith("Config") or value.__name__ == "Simulation":
                    found[f"{name}.{value.__name__}"] = value
    return found


def own_fields(config: type, every: dict[str, type]) -> list[str]:
    """The fields a config declares itself (not inherited), leaving out those whose type is a config of the package:
    a part held whole is shared, not copied."""
    parts = set(every.values())
    hints = config.__dict__.get("__annotations__", {})
    fields = {f.name: f for f in dataclasses.fields(config)}
    return [name for name in hints if name in fields and not _is_part(fields[name], parts)]


def _is_part(field: dataclasses.Field, parts: set[type]) -> bool:
    default = field.default if field.default is not dataclasses.MISSING else None
    if field.default_factory is not dataclasses.MISSING:
        default = field.default_factory()
    return dataclasses.is_dataclass(default) or any(part.__name__ in str(field.type) for part in parts)


def declared_by() -> dict[str, list[str]]:
    """field name -> the configs that declare it, a subclass not counted beside its base."""
    every = configs()
    owners: dict[str, list[str]] = defaultdict(list)
    for qualified, config in every.items():
        for name in own_fields(config, every):
            bases = [b for b in config.__mro__[1:] if b in every.values() and name in getattr(b, "__annotations__", {})]
            if not bases:
                owners[name].append(qualified.removeprefix("trajforge."))
    return owners


def test_the_configs_are_read():
    names = {qualified.rsplit(".", 1)[1] for qualified in configs()}
    assert {"AgentRLConfig", "RLConfig", "GSPOConfig", "CollectConfig", "Simulation", "SimCheckConfig"} <= names


def test_no_config_declares_a_field_of_another():
    copied = {name: owners for name, owners in declared_by().items() if len(owners) > 1 and name not in NOT_COPIES}
    assert not copied, f"fields declared by two configs (hold the part whole instead): {copied}"


def test_every_field_said_not_to_be_a_copy_is_still_declared_twice():
    shared = {name for name, owners in declared_by().items() if len(owners) > 1}
    assert set(NOT_COPIES) <= shared, f"stale entries: {sorted(set(NOT_COPIES) - shared)}"


def test_agent_rl_shares_gspo_and_the_episodes_whole():
    from trajforge.agents.config import AgentRLConfig
    from trajforge.collectors.config import CollectConfig
    from trajforge.training.configs import GSPOConfig, RLConfig

    agent_rl = {f.name for f in dataclasses.fields(AgentRLConfig)}
    assert not agent_rl & ({f.name for f in dataclasses.fields(GSPOConfig)} | {"suites", "max_turns", "simulation"})
    assert isinstance(AgentRLConfig().gspo, GSPOConfig) and isinstance(RLConfig().gspo, GSPOConfig)
    assert isinstance(AgentRLConfig().run, CollectConfig)
