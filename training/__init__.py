"""Tokenization of shards, models, the CPT/SFT/GSPO loops, rewards and serving."""
