"""The prepare-rl Beam job: one turn per trajectory as an RL prompt, with its reference and a verifier spec."""
