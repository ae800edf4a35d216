"""The one client for OpenAI-compatible chat-completions endpoints (vLLM, SGLang, OpenAI, `trajforge serve`), used
by every caller of one: the LLM agent policy, the endpoint judge, the simulated environment, the SFT generator and
the eval endpoint model. It imports nothing else of ours."""

from trajforge.endpoints.client import ChatClient, Endpoint, EndpointError

__all__ = ["ChatClient", "Endpoint", "EndpointError"]
