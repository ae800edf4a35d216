"""What a trajectory's metadata records of the control spec it ran under, read without the spec's fault kinds and
words (sandboxes/control.py owns those): the one reader of the record, for sandboxes' `recorded_control` and for
the stages below sandboxes that must keep a recorded spec true of the turns it names."""

import json

CONTROL_KEY = "control"  # the trajectory metadata key a spec is recorded under


def control_record(metadata: str | None) -> dict | None:
    """The control spec a trajectory's metadata records, as recorded ({"injections": [...]}); None when it records
    none. Metadata that is not JSON records none: the schema does not require JSON there, and an imported record's
    may not be."""
    try:
        meta = json.loads(metadata) if metadata else {}
    except ValueError:
        return None
    record = meta.get(CONTROL_KEY) if isinstance(meta, dict) else None
    return record if isinstance(record, dict) else None


def last_instructed_action(metadata: str | None) -> int | None:
    """The index (from 0) of the last action a recorded control spec names; None with no spec or no faults."""
    injections = (control_record(metadata) or {}).get("injections")
    if not isinstance(injections, list):
        return None
    return max((i["turn"] for i in injections if isinstance(i, dict) and isinstance(i.get("turn"), int)), default=None)
