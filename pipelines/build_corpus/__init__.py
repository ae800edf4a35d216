"""The build-corpus Beam job (pipeline.py), its stages (transforms.py) and what it writes (outputs.py)."""
