"""Policies that choose actions, one module each: scripted (replays a task's actions), explorer (samples from a
grammar for volume without a model), llm (an agent for any OpenAI-compatible chat-completions endpoint)."""

import importlib
import pkgutil

from trajforge.collectors.policies.base import POLICIES, Policy

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["POLICIES", "Policy"]
