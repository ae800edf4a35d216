"""Versions of the data contract."""

SCHEMA_VERSION = "1"
# Versions this reader accepts. When v2 lands, v1 stays here with an upgrade step in validation.
SUPPORTED_SCHEMA_VERSIONS = ("1",)
