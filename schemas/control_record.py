"""What a trajectory's metadata records of the control spec it ran under, read without the spec's fault kinds and
words (sandboxes/control.py owns those): for the stages below sandboxes that must keep a recorded spec true of the
turns it names."""

import json

CONTROL_KEY = "control"  # the trajectory metadata key a spec is recorded under


def last_instructed_action(metadata: str | None) -> int | None:
    """The index (from 0) of the last action a recorded control spec names; None with no spec or no faults."""
    try:
        meta = json.loads(metadata) if metadata else {}
    except ValueError:  # the schema does not check that metadata is JSON; an imported record's may not be
        return None
    spec = meta.get(CONTROL_KEY) if isinstance(meta, dict) else None
    turns = [i["turn"] for i in spec.get("injections", []) if isinstance(i, dict)] if isinstance(spec, dict) else []
    return max(turns, default=None)
