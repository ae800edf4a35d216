"""Values that differ between two runs of the same action: timestamps, durations, process ids, temporary names,
random ids. Verifiers never check them; judges' rubrics tell LLM judges to let them differ."""

import re

VOLATILE = re.compile(
    "|".join(
        [
            r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}| ?[+-]\d{4})?",  # ISO time
            r"\d{4}-\d{2}-\d{2}",  # a date
            r"\b\d{1,2}:\d{2}:\d{2}(?:\s+[A-Z]{2,5})?\s+\d{4}\b",  # `date`: time, zone and year
            r"\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\b",  # a clock time
            r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b",  # weekday names of `date`
            r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{1,2}\b",  # `ls -l` dates
            r"\b\d{10}(?:\d{3}|\d{6}|\d{9})?\b",  # epoch seconds, ms, us, ns
            r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|sec|secs|seconds?|min|minutes?)\b",  # durations
            r"\b\d+m\d+(?:\.\d+)?s\b",  # `time` output
            r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",  # UUIDs
            r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}\b",  # long hex ids and hashes
            r"(?:/tmp|/var/tmp)/[\w.-]+",  # temporary paths
            r"\btmp[\w.-]*\b",  # temporary names (tmp.XXXX, tmpab12cd)
            r"(?i:\bpid\b)[:= ]*\d+|\[\d+\]\s+\d+|\bprocess \d+",  # process ids
        ]
    )
)
PLACEHOLDER = "\x00"


def mask(text: str) -> str:
    """The text with every volatile value replaced by one placeholder character."""
    return VOLATILE.sub(PLACEHOLDER, text)


def volatile_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in VOLATILE.finditer(text)]
