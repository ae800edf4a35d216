import pickle

import pytest

from trajforge.evaluation.embedded import EmbeddedJudge
from trajforge.evaluation.endpoint import EndpointJudge
from trajforge.evaluation.factory import JUDGES, JudgeSpec


def test_every_registered_judge_kind_builds_its_judge_from_a_pickled_spec():
    specs = {kind: JudgeSpec(kind, url="http://judge.invalid/v1", model="m") for kind in JUDGES}
    built = {kind: pickle.loads(pickle.dumps(spec)).build() for kind, spec in specs.items()}
    assert isinstance(built["embedded"], EmbeddedJudge) and isinstance(built["endpoint"], EndpointJudge)
    assert built["endpoint"].name == specs["endpoint"].describe() == "endpoint:m"
    assert specs["embedded"].describe() == built["embedded"].label


def test_a_bad_judge_spec_names_the_option_to_fix():
    with pytest.raises(ValueError, match="unknown judge 'llm'; known: embedded, endpoint"):
        JudgeSpec("llm")
    with pytest.raises(ValueError, match="--judge endpoint needs --judge-url and --judge-model"):
        JudgeSpec("endpoint", url="http://judge.invalid/v1")
