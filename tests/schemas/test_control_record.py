"""schemas/control_record.py reads the control spec a trajectory records as sandboxes/control.py records it."""

import json

from trajforge.sandboxes.control import ControlSpec, Injection, recorded_control
from trajforge.schemas.control_record import CONTROL_KEY, control_record, last_instructed_action


def metadata(*injections: Injection) -> str:
    return json.dumps({"task_id": "t", CONTROL_KEY: ControlSpec(injections=injections).record()})


def test_the_last_action_a_recorded_spec_names():
    spec = metadata(Injection(kind="intermittent_error", turn=3), Injection(kind="latency", turn=1))
    assert last_instructed_action(spec) == 3
    assert last_instructed_action(metadata(Injection(kind="intermittent_error", turn=0))) == 0


def test_no_spec_or_a_spec_without_faults_names_no_action():
    assert last_instructed_action(metadata()) is None
    assert last_instructed_action(json.dumps({"task_id": "t"})) is None
    assert last_instructed_action(None) is None and last_instructed_action("") is None
    assert last_instructed_action("cwd=/work") is None  # metadata that is not JSON records no spec
    assert last_instructed_action(json.dumps({CONTROL_KEY: "errors"})) is None
    assert last_instructed_action(json.dumps({CONTROL_KEY: {"injections": [{"kind": "latency"}, 4]}})) is None


def test_sandboxes_read_the_spec_back_through_the_same_record():
    spec = ControlSpec(injections=(Injection(kind="intermittent_error", turn=2),))
    recorded = metadata(*spec.injections)
    assert control_record(recorded) == spec.record() and recorded_control(recorded) == spec
    assert recorded_control("cwd=/work") is None and recorded_control(json.dumps({"task_id": "t"})) is None
