"""Each fault kind's detector recognises what the real fault injector produces, and nothing of a clean answer: the
detectors that measure a world model's controllability agree with the faults it learned from."""

import json

import pytest

from tests.sandboxes.test_faults import TASK, ListServer, call
from trajforge.sandboxes.fault_kinds import FAULT_KINDS, detected, kind_of_label, observable
from trajforge.sandboxes.faults import FaultInjector
from trajforge.schemas.records import Action

CONFIGS = {
    "intermittent_error": {"intermittent_error": 1.0},
    "pagination": {"pagination": {"page_size": 3}},
    "incomplete": {"incomplete": 1.0},
    "partial_failure": {"partial_failure": 1.0},
    "truncation": {"truncation": {"rate": 1.0, "max_chars": 40}},
}


@pytest.mark.parametrize("kind", sorted(CONFIGS))
def test_the_detector_of_each_kind_sees_the_real_fault_and_only_it(kind):
    env = FaultInjector(ListServer(), CONFIGS[kind], seed=0)
    env.reset(TASK)
    observation = call(env)
    assert kind_of_label(json.loads(observation.metadata)["fault"]) == kind
    assert detected(observation.content) == {kind}


def test_clean_answers_show_no_fault():
    clean = ListServer().step(None).content
    assert detected(clean) == set()
    assert detected("total 8\n-rw-r--r-- 1 user user 12 notes.txt\n") == set()
    assert detected("cat: missing.txt: No such file or directory") == set()  # an error, but not a fault


def test_a_shell_error_and_a_world_models_words_are_recognised():
    env = FaultInjector(ListServer(), {"intermittent_error": 1.0}, seed=0)
    env.reset(TASK)
    assert detected(env.step(Action(kind="shell", content="ls -la")).content) == {"intermittent_error"}
    assert "intermittent_error" in detected('{"error": "503 Service Unavailable"}')


def test_latency_is_known_but_not_observable():
    assert "latency" in FAULT_KINDS and not observable("latency") and observable("pagination")
    assert set(FAULT_KINDS) == {*CONFIGS, "latency"}  # every kind the injector has
