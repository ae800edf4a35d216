"""Lexical statistics of one (action, observation) pair: the quantities of the paper's Table 3.

W is the set of distinct words of a text: maximal runs of Unicode word characters (letters, digits, underscore,
the regex `\\w+`) in the lowercased text, so "cat ./Notes.txt" has W = {"cat", "notes", "txt"}. Characters are
Python str characters (code points), the unit the masks' spans use.
"""

import re
from dataclasses import dataclass

WORD = re.compile(r"\w+")
# Word sets are read from the first MAX_WORD_CHARS characters of a text: a 1 MB `cat` costs what 16 KiB costs, and
# its head tells echo from novel output as well as the whole would. Lengths always count the whole text.
MAX_WORD_CHARS = 16 * 1024


@dataclass(frozen=True, slots=True)
class TurnStatistics:
    overlap: float  # |Wa∩Wo| / |Wa|: share of the action's words seen in the observation; 0 when Wa is empty
    novelty: float  # |Wo\Wa| / |Wo|: share of the observation's words not in the action; 0 when Wo is empty
    jaccard: float  # |Wa∩Wo| / |Wa∪Wo|; 0 when both are empty
    length_ratio: float  # chars(observation) / max(1, chars(action))
    action_chars: int
    observation_chars: int
    compression_gain: float | None = None  # information.compression_gain; None when not computed
    predictability: float | None = None  # information.predictability; None when not computed


def word_set(text: str) -> set[str]:
    return set(WORD.findall(text[:MAX_WORD_CHARS].lower()))


def turn_statistics(
    action: str,
    observation: str,
    *,
    compression_gain: float | None = None,
    predictability: float | None = None,
) -> TurnStatistics:
    """Statistics of an action's text and its observation's text; the information fields are passed through."""
    action_words = word_set(action)
    observation_words = word_set(observation)
    shared = len(action_words & observation_words)
    union = len(action_words) + len(observation_words) - shared
    return TurnStatistics(
        overlap=shared / len(action_words) if action_words else 0.0,
        novelty=(len(observation_words) - shared) / len(observation_words) if observation_words else 0.0,
        jaccard=shared / union if union else 0.0,
        length_ratio=len(observation) / max(1, len(action)),
        action_chars=len(action),
        observation_chars=len(observation),
        compression_gain=compression_gain,
        predictability=predictability,
    )
