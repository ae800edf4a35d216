"""Agents: running episodes with a model and updating its weights from them. Above collectors (episodes,
environments, the runner) and training (models, sampling, GSPO): the checkpoint policy (checkpoint_policy.py),
episodes generated in batches with their tokens kept (rollouts.py), multi-turn agent RL (rl.py) and measuring
agents on held-out tasks (agent_eval.py); pipelines' commands call into it.

Importing the package registers the `checkpoint` policy among the collectors' POLICIES, and the checkpoint world
model of `--simulate CHECKPOINT` (world_model.py) among their CHECKPOINT_WORLD_MODELS."""

from trajforge.agents import checkpoint_policy, world_model  # noqa: F401 - register the policy and the world model
