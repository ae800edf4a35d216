"""Agents: everything that runs episodes with a model and/or updates weights from episodes (above collectors and
training); pipelines' commands call into it."""
