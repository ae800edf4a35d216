"""Pure functions: per-turn information statistics and the loss-masking policy (issue #5). No Beam, no torch."""
