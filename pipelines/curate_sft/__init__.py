"""The curate-sft Beam job: queries from CPT shards, N candidates each, judged, best-of-N above a threshold."""
