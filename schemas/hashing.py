"""Canonical JSON and content hashes: trajectory ids, shard names, config hashes."""

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(data: bytes | str, length: int = 32) -> str:
    """Hex sha256 prefix of bytes or text (text is hashed as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:length]


def config_hash(config: Any) -> str:
    return content_hash(canonical_json(config), 16)
