"""Policies that choose actions: scripted (replays a task's actions), explorer (samples from a grammar for
volume without a model) and an LLM agent for any OpenAI-compatible chat-completions endpoint."""

from collectors.policies.base import Policy
from collectors.policies.explorer import ExplorerPolicy
from collectors.policies.llm import LLMAgentPolicy
from collectors.policies.scripted import ScriptedPolicy

POLICIES = {"scripted": ScriptedPolicy, "explorer": ExplorerPolicy, "llm": LLMAgentPolicy}

__all__ = ["POLICIES", "ExplorerPolicy", "LLMAgentPolicy", "Policy", "ScriptedPolicy"]
