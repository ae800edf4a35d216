"""Policies, task suites, the episode runner and the raw writer."""
