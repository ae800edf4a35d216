"""Normalisation: one spelling for the same content, so exact and near-duplicate detection see through noise."""

import re
import unicodedata

from trajforge.schemas.records import Trajectory

ANSI_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


TRAILING_SPACE = re.compile(r"[ \t]+\n")


def normalize_text(text: str) -> str:
    """NFC, LF line endings, no ANSI escape sequences, no NUL characters, no trailing spaces at line ends. A terminal
    shows neither escapes nor NULs (`sort` of a binary file printed 8,020 of them in the demo); a tokenizer makes
    a long run of one rare token of them, which taught SmolLM2 nothing but a loss spike of 20 nats."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\x1b" in text:
        text = ANSI_ESCAPE.sub("", text)
    if " \n" in text or "\t\n" in text:
        text = TRAILING_SPACE.sub("\n", text)
    return text


def normalize(record: Trajectory) -> Trajectory:
    """The same trajectory with normalised texts and the content id that goes with them."""
    texts = [
        record.task_description,
        *(t.action.content for t in record.turns),
        *(t.observation.content for t in record.turns),
    ]
    if all(normalize_text(text) is text for text in texts):  # already clean: the usual case, no copies
        return record
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
