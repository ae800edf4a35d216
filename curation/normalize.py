"""Normalisation: one spelling for the same content, so exact and near-duplicate detection see through noise."""

import re
import unicodedata

from schemas.records import Trajectory

ANSI_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def normalize_text(text: str) -> str:
    """NFC, LF line endings, no ANSI escape sequences, no trailing spaces at line ends."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = ANSI_ESCAPE.sub("", text)
    return re.sub(r"[ \t]+\n", "\n", text)


def normalize(record: Trajectory) -> Trajectory:
    """The same trajectory with normalised texts and the content id that goes with them."""
    turns = [
        turn.model_copy(
            update={
                "action": turn.action.model_copy(update={"content": normalize_text(turn.action.content)}),
                "observation": turn.observation.model_copy(
                    update={"content": normalize_text(turn.observation.content)}
                ),
            }
        )
        for turn in record.turns
    ]
    changed = record.model_copy(update={"turns": turns, "task_description": normalize_text(record.task_description)})
    return changed.with_content_id()
