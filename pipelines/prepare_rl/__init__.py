"""The prepare-rl Beam job: one turn per trajectory as an RL prompt, with its reference and a verifier spec."""

DEFAULT_TOKEN_BUDGET = 2048  # prompt tokens at most (the job's default and the command line's)
