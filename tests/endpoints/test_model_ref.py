"""Every form a model is named in, parsed by the one parser: a folder, smollm2, URL=MODEL with its key variable;
anything else refused with the forms the flag takes."""

import pytest

from trajforge.endpoints import Endpoint
from trajforge.endpoints.model_ref import FORMS, ModelRef, ModelRefError, parse_model


def test_each_form_is_read_as_what_it_names():
    folder = parse_model("runs/agent-sft/checkpoint-9", "--agent")
    assert folder == ModelRef(weights="runs/agent-sft/checkpoint-9") and folder.text == "runs/agent-sft/checkpoint-9"
    assert parse_model("smollm2", "--world-model") == ModelRef(weights="smollm2")
    served = parse_model("http://127.0.0.1:8000/v1=checkpoint-60", "--world-model", "WM_KEY")
    assert (served.endpoint.url, served.endpoint.model, served.endpoint.key_env) == (
        "http://127.0.0.1:8000/v1", "checkpoint-60", "WM_KEY",
    )  # fmt: skip
    assert served.text == "http://127.0.0.1:8000/v1=checkpoint-60" and served.weights is None
    again = parse_model(served, "--world-model")  # a reference given again is read from its text, keyed anew
    assert again == ModelRef(endpoint=Endpoint("http://127.0.0.1:8000/v1", "checkpoint-60"))


@pytest.mark.parametrize("text", ["", "  ", "http://127.0.0.1:8000/v1", "https://host/v1=", "127.0.0.1:8000=wm"])
def test_what_is_no_form_is_refused_naming_the_flag_and_the_forms(text):
    with pytest.raises(ModelRefError, match="--world-model") as refused:
        parse_model(text, "--world-model")
    assert "URL=MODEL" in str(refused.value)


def test_training_takes_weights_only():
    assert parse_model("smollm2", "--init", weights_only=True).weights == "smollm2"
    with pytest.raises(ModelRefError, match="--init http://h/v1=m: an endpoint cannot be trained") as refused:
        parse_model("http://h/v1=m", "--init", weights_only=True)
    assert "URL=MODEL" not in str(refused.value).partition(";")[2] and "smollm2" in str(refused.value)
    assert "URL=MODEL" in FORMS
