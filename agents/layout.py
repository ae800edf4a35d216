"""The agent role's chat layout at act time: system = the task and the action space, then the initial state and
each observation as the user, each action as the assistant.

A stand-in for `trajforge.training.agent_render.agent_messages` (the layout agent SFT trains on), which replaces
it once it lands, so acting and training see the same layout."""

import json


def agent_messages(instruction: str, action_space: list[dict], initial: str) -> list[dict]:
    """The conversation an episode starts from (its first turn's prompt)."""
    tools = json.dumps(action_space, ensure_ascii=False)
    system = f"You are an agent acting in a computer environment.\n\nTask: {instruction}\n\nAction space: {tools}"
    return [{"role": "system", "content": system}, {"role": "user", "content": initial}]


def observation_message(observation: str) -> dict:
    """How an observation follows the action that produced it."""
    return {"role": "user", "content": observation}
