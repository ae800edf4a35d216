"""Agents: running episodes with a model and updating its weights from them. Above collectors (episodes,
environments, the runner) and training (models, sampling, GSPO): the checkpoint policy (checkpoint_policy.py),
episodes generated in batches with their tokens kept (rollouts.py), multi-turn agent RL (rl.py) and measuring
agents on held-out tasks (agent_eval.py); pipelines' commands call into it.

The `checkpoint` policy and the checkpoint world model of `--simulate CHECKPOINT` (world_model.py) are declared by
name beside collectors' POLICIES and CHECKPOINT_WORLD_MODELS, which import their modules when the name is read."""
