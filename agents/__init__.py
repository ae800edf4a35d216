"""Agents: running episodes with a model and updating its weights from them. Above collectors (episodes,
environments, the runner) and training (models, sampling, GSPO): the checkpoint policy (checkpoint_policy.py),
episodes generated in batches with their tokens kept (rollouts.py), multi-turn agent RL (rl.py) and measuring
agents on held-out tasks (evaluation.py); pipelines' commands call into it.

Importing the package registers the `checkpoint` policy among the collectors' POLICIES."""

from trajforge.agents import checkpoint_policy  # noqa: F401 - registers the checkpoint policy
