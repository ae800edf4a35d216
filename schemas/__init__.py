"""The data contract: typed records, the explicit Arrow schema, validation, readers and writers, foreign formats.

Imports neither Beam, torch nor docker.
"""

from trajforge.schemas.records import (
    Action,
    Agent,
    Environment,
    Observation,
    Outcome,
    Source,
    Trajectory,
    Turn,
    new_trajectory,
)
from trajforge.schemas.validation import Problem, ReadResult, validate_record
from trajforge.schemas.version import SCHEMA_VERSION, SUPPORTED_SCHEMA_VERSIONS

__all__ = [
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "Action",
    "Agent",
    "Environment",
    "Observation",
    "Outcome",
    "Problem",
    "ReadResult",
    "Source",
    "Trajectory",
    "Turn",
    "new_trajectory",
    "validate_record",
]
