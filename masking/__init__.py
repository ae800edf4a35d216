"""Pure functions: per-turn information statistics and the loss-masking policy. No Beam, no torch.

statistics.py   lexical statistics of an (action, observation) pair: the paper's Table 3 quantities
information.py  compression gain given the context; corpus-wide predictability from the action
policy.py       YAML policies (bundled in policies/): ordered rules -> category and keep ratio
masks.py        what a keep ratio does to a turn: turn_sampling or character spans
annotate.py     mask_trajectory, the entry point a pipeline calls once per trajectory
"""

from trajforge.masking.annotate import TurnAnnotation, mask_trajectory
from trajforge.masking.information import PredictabilityCombiner, PredictabilityTable, build_predictability_table
from trajforge.masking.masks import TurnMask
from trajforge.masking.policy import MaskingPolicy, PolicyError, load_policy
from trajforge.masking.statistics import TurnStatistics

__all__ = [
    "MaskingPolicy",
    "PolicyError",
    "PredictabilityCombiner",
    "PredictabilityTable",
    "TurnAnnotation",
    "TurnMask",
    "TurnStatistics",
    "build_predictability_table",
    "load_policy",
    "mask_trajectory",
]
