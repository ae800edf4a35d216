"""Tokenization of shards, models, the CPT/SFT/GSPO loops, rewards and serving (issues #6, #7)."""
