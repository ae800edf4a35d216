"""Policies that choose actions, one module each: scripted (replays a task's actions), explorer (samples from a
grammar for volume without a model), llm (an agent for any OpenAI-compatible chat-completions endpoint)."""

from trajforge.collectors.policies.base import POLICIES, Policy

__all__ = ["POLICIES", "Policy"]
