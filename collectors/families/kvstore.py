"""`kvstore`: the versioned configuration store (sandboxes/servers/kvstore.py): read, write, compare-and-set,
delete, move, restore from history, and count keys by listing page after page. Each task's setup writes a fresh
service's keys beside the store's seeded ones; every key, value and version the solution uses is in the
instruction or in what a call returns."""

import random
from collections.abc import Callable
from typing import Literal

from pydantic import Field

from trajforge.collectors.families import FAMILIES
from trajforge.collectors.families.base import Draft, Family, FamilyParams
from trajforge.collectors.families.tool_calls import call, paged_calls, shown
from trajforge.collectors.families.words import WORDS
from trajforge.sandboxes.base import ToolCheck

SETTINGS = (
    "timeout", "retries", "region", "owner", "mode", "level", "url", "limit", "replicas", "color", "tier", "zone",
    "quota", "channel", "window", "format", "backend", "version", "threads", "cache",
)  # fmt: skip
Operation = Literal["write", "copy", "compare-and-set", "delete", "move", "restore", "count"]


class KvstoreParams(FamilyParams):
    operations: tuple[Operation, ...] = Operation.__args__
    max_keys: int = Field(default=12, ge=2, le=len(SETTINGS) - 1)  # keys a task's service holds, at most


def _value(rng: random.Random) -> str:
    word, number = rng.choice(WORDS), rng.randint(1, 9999)
    return rng.choice((word, str(number), f"http://{word}.internal:{number}"))


@FAMILIES.register(help="the kvstore MCP server: read, write, compare-and-set, delete, history, paged listing")
class KvstoreFamily(Family):
    name = "kvstore"
    kind = "mcp"
    server = "kvstore"
    Params = KvstoreParams

    def draft(self, rng: random.Random) -> Draft:
        service = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
        count = rng.randint(2, self.params.max_keys)
        keys = {f"{service}/{s}": _value(rng) for s in rng.sample(SETTINGS, count)}
        operation = rng.choice(self.params.operations)
        instruction, actions, check, extra_setup = TASKS[operation](rng, service, keys)
        setup = tuple(call("set", key=k, value=v) for k, v in keys.items()) + extra_setup
        return Draft(instruction=instruction, actions=tuple(actions), check=check, setup=setup, vocabulary=tuple(keys))


def _is(key: str, value: str) -> ToolCheck:
    return ToolCheck(tool="get", arguments={"key": key}, contains=shown("value", value))


def _write(rng, service, keys):
    key, value = f"{service}/{rng.choice(SETTINGS)}", _value(rng)
    actions = [call("set", key=key, value=value)] + [call("get", key=key)] * rng.randint(0, 1)
    return f"Set {key} to {value}.", actions, _is(key, value), ()


def _copy(rng, service, keys):
    source = rng.choice(list(keys))
    target = f"{rng.choice(WORDS)}/{source.rsplit('/', 1)[1]}"
    actions = [call("get", key=source), call("set", key=target, value=keys[source])]
    return f"Copy the value of {source} to {target}.", actions, _is(target, keys[source]), ()


def _compare_and_set(rng, service, keys):
    key = rng.choice(list(keys))
    changes = [_value(rng) for _ in range(rng.randint(0, 3))]
    new = rng.choice([w for w in WORDS if w != keys[key]])
    version = 1 + len(changes)
    actions = [call("get", key=key), call("set", key=key, value=new, expected_version=version)]
    instruction = f"Set {key} to {new} with compare-and-set: read its version, then set it only at that version."
    return instruction, actions, _is(key, new), tuple(call("set", key=key, value=v) for v in changes)


def _delete(rng, service, keys):
    key = rng.choice(list(keys))
    actions = [call("get", key=key)] * rng.randint(0, 1) + [call("delete", key=key)]
    check = ToolCheck(tool="history", arguments={"key": key}, contains=shown("deleted", True))
    return f"Delete {key}.", actions, check, ()


def _move(rng, service, keys):
    source = rng.choice(list(keys))
    target = f"{service}/{rng.choice([s for s in SETTINGS if f'{service}/{s}' not in keys])}"
    actions = [call("get", key=source), call("set", key=target, value=keys[source]), call("delete", key=source)]
    instruction = f"Rename {source} to {target}: copy its value to {target}, then delete {source}."
    return instruction, actions, _is(target, keys[source]), ()


def _restore(rng, service, keys):
    key = rng.choice(list(keys))
    changes = [v for v in (_value(rng) for _ in range(rng.randint(1, 3))) if v != keys[key]] or ["changed"]
    actions = [call("history", key=key), call("set", key=key, value=keys[key], expected_version=1 + len(changes))]
    instruction = f"{key} was changed after it was first set; restore its first value (see its history)."
    return instruction, actions, _is(key, keys[key]), tuple(call("set", key=key, value=v) for v in changes)


def _count(rng, service, keys):
    limit = rng.randint(2, 5)
    target = f"reports/{service}-keys"
    listing = paged_calls("list_keys", len(keys), {"limit": limit}, prefix=f"{service}/")
    instruction = (
        f"Count the keys under {service}/, listing {limit} at a time and following the cursor, "
        f"and store the count under {target}."
    )
    return instruction, [*listing, call("set", key=target, value=str(len(keys)))], _is(target, str(len(keys))), ()


TASKS: dict[str, Callable] = {
    "write": _write,
    "copy": _copy,
    "compare-and-set": _compare_and_set,
    "delete": _delete,
    "move": _move,
    "restore": _restore,
    "count": _count,
}
