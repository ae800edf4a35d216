"""Secret redaction: API keys, tokens, private keys and passwords become typed placeholders.

Patterns are ordered: the most specific first, so a GitHub token is not reported as a generic secret. Where a
pattern has a `secret` group, only that part is replaced (`password=<REDACTED:password>`).
"""

import re
from collections import Counter

from trajforge.schemas.records import Trajectory

PATTERNS: list[tuple[str, re.Pattern]] = [
    (
        "private_key",
        re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z]+ )*PRIVATE KEY-----|$)", re.S),
    ),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b")),
    ("openai_key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b")),
    ("url_credentials", re.compile(r"://(?P<secret>[^/\s:@]+:[^/\s@]+)@")),
    ("bearer_token", re.compile(r"(?i)\bbearer (?P<secret>[A-Za-z0-9._~+/-]{16,}=*)")),
    (
        "password",
        re.compile(
            r"""(?ix)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)
            ["']?\s*[:=]\s*["']?(?P<secret>[^\s"',;<>]{4,})"""
        ),
    ),
]


def _replacer(pattern: re.Pattern, placeholder: str):
    if "secret" not in pattern.groupindex:
        return placeholder

    def replace(match: re.Match) -> str:
        start, end = match.span("secret")
        whole = match.group(0)
        return whole[: start - match.start()] + placeholder + whole[end - match.start() :]

    return replace


REPLACERS = [(kind, pattern, _replacer(pattern, f"<REDACTED:{kind}>")) for kind, pattern in PATTERNS]


# A cheap check first: lowercased text without any of these cannot hold a secret the patterns above find.
TRIGGERS = (
    "private key",
    "akia",
    "asia",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "sk-",
    "xox",
    "aiza",
    "eyj",
    "://",
    "bearer",
    "passw",
    "pwd",
    "secret",
    "api",
    "token",
)


def might_hold_secrets(text: str) -> bool:
    lower = text.lower()
    return any(trigger in lower for trigger in TRIGGERS)


def redact_text(text: str, counts: Counter) -> str:
    if not might_hold_secrets(text):
        return text
    for kind, pattern, replacement in REPLACERS:
        text, n = pattern.subn(replacement, text)
        if n:
            counts[kind] += n
    return text


def redact(record: Trajectory) -> tuple[Trajectory, Counter]:
    """The trajectory with secrets in actions, observations and the system prompt replaced, and what was found."""
    counts: Counter = Counter()
    texts = [
        record.task_description,
        record.initial_state,
        record.demonstrations,
        *(t.action.content for t in record.turns),
        *(t.observation.content for t in record.turns),
    ]
    if not might_hold_secrets("\n".join(text for text in texts if text)):  # one scan per trigger, not per text
        return record, counts
    turns = [
        turn.model_copy(
            update={
                "action": turn.action.model_copy(update={"content": redact_text(turn.action.content, counts)}),
                "observation": turn.observation.model_copy(
                    update={"content": redact_text(turn.observation.content, counts)}
                ),
            }
        )
        for turn in record.turns
    ]
    update = {"turns": turns}
    for part in ("task_description", "initial_state", "demonstrations"):
        update[part] = redact_text(getattr(record, part), counts)
    if not counts:
        return record, counts
    return record.model_copy(update=update).with_content_id(), counts
