from collections import Counter

import pytest

from tests.builders import make_trajectory
from trajforge.curation.redaction import PATTERNS, redact, redact_text

SECRETS = [
    ("key AKIAIOSFODNN7EXAMPLE here", "aws_access_key", "key <REDACTED:aws_access_key> here"),
    ("token ghp_" + "a" * 36, "github_token", "token <REDACTED:github_token>"),
    ("OPENAI_API_KEY=sk-proj-" + "x" * 30, "openai_key", "OPENAI_API_KEY=<REDACTED:openai_key>"),
    ("xoxb-1234567890-abcdef", "slack_token", "<REDACTED:slack_token>"),
    ("GOOGLE_MAPS=AIzaSyA1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tU_v", "google_api_key", "GOOGLE_MAPS=<REDACTED:google_api_key>"),
    (
        "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
        "jwt",
        "session <REDACTED:jwt> ok",
    ),
    ("password: hunter22!", "password", "password: <REDACTED:password>"),
    ('{"api_key": "abcd1234"}', "password", '{"api_key": "<REDACTED:password>"}'),
    ("postgres://app:s3cr3t@db:5432/x", "url_credentials", "postgres://<REDACTED:url_credentials>@db:5432/x"),
    ("Authorization: Bearer abcdefghijklmnop0123", "bearer_token", "Authorization: Bearer <REDACTED:bearer_token>"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter",
        "private_key",
        "<REDACTED:private_key>\nafter",
    ),
]


def test_every_kind_has_a_case():
    """Each kind the redactor knows (docs/building-the-corpus.md lists them all) is exercised by a case above."""
    assert {kind for kind, _ in PATTERNS} == {kind for _, kind, _ in SECRETS}


@pytest.mark.parametrize(("text", "kind", "expected"), SECRETS)
def test_each_kind_of_secret(text, kind, expected):
    counts = Counter()
    assert redact_text(text, counts) == expected
    assert counts == {kind: 1}


def test_ordinary_text_is_untouched():
    text = "the password field is empty; run skip-tests; ask the key holder"
    counts = Counter()
    assert redact_text(text, counts) == text and not counts


def test_redact_record_counts_and_reidentifies():
    turns = [
        {
            "index": 0,
            "action": {"kind": "shell", "content": "export TOKEN=ghp_" + "b" * 40},
            "observation": {"content": "password=letmein"},
        }
    ]
    record = make_trajectory(turns=turns)
    clean, counts = redact(record)
    assert counts == {"github_token": 1, "password": 1}
    assert "ghp_" not in clean.turns[0].action.content and clean.trajectory_id == clean.content_id()
    untouched, none = redact(make_trajectory())
    assert not none and untouched == make_trajectory()
