"""Environments behind one interface, `sandboxes.base.Sandbox`: reset(task) -> Observation, step(Action) ->
Observation, action_space(), check(task), close(). Docker terminal, MCP servers, headless browser, search and a
served world model (simulated) live here; `collectors.environments` says which a suite runs in."""
