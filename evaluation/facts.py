"""What a judge or a verifier can check in an observation without understanding it: deterministic facts
(numbers, paths, URLs, ids like row_0007 or a1b2c3d4, file names, quoted strings), lines, words, and whether
the text reports an error."""

import re
from collections import Counter

FACT = re.compile(
    r"""https?://\S+|(?:/[\w.-]+)+/?|\b[\w-]*\d[\w-]*\b|\b[\w-]+\.[A-Za-z][\w]{0,7}\b|"[^"\n]{1,80}"|'[^'\n]{1,80}'"""
)
_WORD = re.compile(r"\w+")
# Phrases with which terminals, tools, APIs and pages report that something went wrong.
_ERROR = re.compile(
    r"\b(?:error|errno|denied|not found|no such|cannot|can't|could not|couldn't|failed|failure|fatal|invalid|"
    r"exception|traceback|refused|timed out|unauthori[sz]ed|forbidden|not permitted|not allowed|illegal|"
    r"unknown (?:command|option|tool)|unrecognized|usage:|exit code [1-9])\b"
    r'|"isError":\s*true|"error":\s*(?!null|false)',
    re.IGNORECASE,
)


def facts(text: str) -> set[str]:
    return {fact.strip("\"'") for fact in FACT.findall(text)}


def lines(text: str) -> Counter:
    """Non-blank lines, trailing spaces ignored, as a multiset."""
    return Counter(line.rstrip() for line in text.splitlines() if line.strip())


def words(text: str) -> Counter:
    return Counter(word.lower() for word in _WORD.findall(text))


def reports_error(text: str) -> bool:
    return _ERROR.search(text) is not None


def normalized(text: str) -> str:
    """The text as judges compare it: trailing spaces and blank edges do not count."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())
