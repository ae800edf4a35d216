"""Environments behind one interface: reset(task) -> Observation, step(Action) -> Observation, action_space(), close().

Docker terminal, MCP servers, headless browser, search and simulated environments land here (issues #3, #4, #7).
"""
