from trajforge.evaluation.extraction import extract_prediction
from trajforge.evaluation.turns import corpus_turn
from trajforge.training.generators import (
    RATIONALIZATION,
    ROLLOUT,
    VERBATIM,
    Generator,
    RationalizationGenerator,
    sample_kind,
)


def test_rationalization_labels_the_verbatim_reference_and_its_degraded_copies(corpus):
    query = corpus_turn(corpus[1], 1)
    labelled = RationalizationGenerator().labelled(query, 3, seed=0)
    predictions = [extract_prediction(c.text).text for c in labelled]
    assert predictions[0] == query.reference and len(set(predictions)) == 3
    assert labelled[0].origin == VERBATIM
    assert all(sample_kind(c.origin) == RATIONALIZATION for c in labelled)
    assert [c.text for c in labelled] == RationalizationGenerator().generate(query, 3, seed=0)
    assert "model-free" in RationalizationGenerator.name


class _Echo(Generator):
    name = "echo"

    def generate(self, query, n, seed, hint=False):
        return [query.action] * n


def test_model_candidates_are_rollouts_unless_the_model_saw_the_answer(corpus):
    query = corpus_turn(corpus[1], 1)
    assert {c.origin for c in _Echo().labelled(query, 2, seed=0)} == {ROLLOUT}
    assert {c.origin for c in _Echo().labelled(query, 2, seed=0, hint=True)} == {RATIONALIZATION}


def test_generator_specs_build_their_registered_generator_and_name_what_is_missing(tmp_path):
    import pickle

    import pytest

    from trajforge.training.generators import GENERATORS, EndpointGenerator, GeneratorSpec

    assert set(GENERATORS) == {"endpoint", "checkpoint", "rationalization"}
    spec = pickle.loads(pickle.dumps(GeneratorSpec("endpoint", url="http://gen.invalid/v1", model="m")))
    endpoint = spec()
    assert isinstance(endpoint, EndpointGenerator) and endpoint.name == "endpoint:m" and endpoint.max_tokens == 512
    assert isinstance(GeneratorSpec()(), RationalizationGenerator)
    with pytest.raises(ValueError, match="--generator endpoint needs --generator-url and --generator-model"):
        GeneratorSpec("endpoint", url="http://gen.invalid/v1")
    with pytest.raises(ValueError, match="--generator checkpoint needs --checkpoint FOLDER"):
        GeneratorSpec("checkpoint", checkpoint=str(tmp_path))
    with pytest.raises(ValueError, match="unknown generator 'oracle'; known: endpoint, checkpoint, rationalization"):
        GeneratorSpec("oracle")
