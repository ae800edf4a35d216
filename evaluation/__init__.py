"""Judging world-model predictions, used alike by curation, the RL reward and `trajforge eval`: one prediction
extractor, one `Judge` interface (the embedded judge and an OpenAI-compatible endpoint judge with per-domain
rubrics), judge calibration, rule verifiers, benchmark sampling, prompting and scoring (AgentWorldBench style)."""
