"""deja_blame.outputs.redact: each kind of secret goes, ordinary text stays."""

from __future__ import annotations

import pytest

from deja_blame.outputs.redact import REDACTED, redact

# Fake secrets of the real shapes (assembled so that no scanner takes this file for a leak).
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_TEMP = "ASIA" + "Y34FZKBOKMUTVV7A"
GCP = "AIza" + "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GHO = "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a"
GHS = "ghs_" + "abcdefghijklmnopqrstuvwxyz0123456789"
GHU = "ghu_" + "ZZZZabcdefghijklmnopqrstuvwxyz012345"
GH_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
OPENAI = "sk-" + "proj-abcdefghijklmnopqrstuvwxyz0123456789"
ANTHROPIC = "sk-" + "ant-api03-abcdefghijklmnopqrstuvwxyz-0123456789"
SLACK_BOT = "xoxb-" + "123456789012-1234567890123-abcdefghijklmnop"
SLACK_USER = "xoxp-" + "123456789012-abcdefghij"
GITLAB = "glpat-" + "xxxxABCD1234yyyyZZ99"
JWT = (
    "eyJ"
    + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)


@pytest.mark.parametrize(
    "secret",
    [
        AWS,
        AWS_TEMP,
        GCP,
        GHP,
        GHO,
        GHS,
        GHU,
        GH_PAT,
        OPENAI,
        ANTHROPIC,
        SLACK_BOT,
        SLACK_USER,
        GITLAB,
        JWT,
    ],
)
def test_tokens_are_redacted_in_any_context(secret: str) -> None:
    for text in (
        secret,
        f"export KEY={secret}",
        f"the key is {secret}.",
        f'{{"key": "{secret}"}}',
        f"`{secret}`\nnext line",
    ):
        out = redact(text)
        assert secret not in out, text
        assert REDACTED in out


def test_surrounding_text_is_kept() -> None:
    assert redact(f"use {GHP} for the API") == "use [redacted] for the API"
    assert redact(f"keys: {AWS}, {GCP}") == "keys: [redacted], [redacted]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2", "password=[redacted]"),
        ("DB_PASSWORD = 'correct horse'", "DB_PASSWORD = '[redacted]'"),
        ('token="abc123"', 'token="[redacted]"'),
        ("--token=abc123 --verbose", "--token=[redacted] --verbose"),
        ("secret=s3cr3t&user=bob", "secret=[redacted]&user=bob"),
        ("api_key=AbCdEf123", "api_key=[redacted]"),
        ("API-KEY=zzz", "API-KEY=[redacted]"),
        ("export GITHUB_TOKEN=abc", "export GITHUB_TOKEN=[redacted]"),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "AWS_SECRET_ACCESS_KEY=[redacted]"),
        ('{"password": "hunter2", "user": "bob"}', '{"password": "[redacted]", "user": "bob"}'),
        ("  client_secret: abcdef  # prod", "  client_secret: [redacted]  # prod"),
    ],
)
def test_assignments_keep_the_name_and_lose_the_value(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'curl -H "Authorization: Bearer abc.def-ghi_123" https://api',
            'curl -H "Authorization: Bearer [redacted]" https://api',
        ),
        ("authorization: bearer xyz", "authorization: bearer [redacted]"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [redacted]"),
        (
            "headers = {'Authorization': 'Bearer tok123'}",
            "headers = {'Authorization': 'Bearer [redacted]'}",
        ),
        ("X-Api-Key: abc123", "X-Api-Key: [redacted]"),
        (
            "git clone https://bob:pa55w0rd@example.com/r.git",
            "git clone https://bob:[redacted]@example.com/r.git",
        ),
    ],
)
def test_authorization_headers_and_url_passwords(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_private_key_blocks_go_whole() -> None:
    block = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        "MIIEowIBAAKCAQEA7bq98r1mXc4Ee8dGJ8r0\n"
        "Proc9aKq1JmGxzeE1vLrx6d0DqzZ2aTrWYSp\n"
        "-----END RSA PRIVATE KEY-----"
    )
    out = redact(f"before\n{block}\nafter")
    assert out == "before\n[redacted]\nafter"
    openssh = block.replace("RSA ", "OPENSSH ")
    assert redact(openssh) == REDACTED
    assert redact(block.replace("RSA ", "")) == REDACTED  # PKCS#8 "PRIVATE KEY"
    assert redact(block.replace("RSA ", "ENCRYPTED ")) == REDACTED


def test_a_private_key_cut_before_its_end_still_goes() -> None:
    cut = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB\n"
        "AAAAMwAAAAtzc2gtZWQyNTUxOQAAACBq2vbQ5xH6Z\n"
        "and then the transcript goes on"
    )
    out = redact(cut)
    assert "b3BlbnNzaC1rZXkt" not in out and "AAAAMwAAAAtzc2gt" not in out
    assert out.endswith("\nand then the transcript goes on")


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=100",
        "tokenizer = Tokenizer()",
        'token = os.environ["GITHUB_TOKEN"]',
        "password = getpass.getpass()",
        "password=$DB_PASSWORD",
        'curl -H "Authorization: Bearer $TOKEN" https://api',
        "api_key = settings.API_KEY",
        "if password == expected:",
        "token: see the docs for how to get one",
        "password=",
        "the task-runner uses sk-learn and scikit",
        "AKIA is the prefix of AWS key ids",
        "ghp_ tokens are GitHub's personal tokens",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcD\n-----END PUBLIC KEY-----",
        "commit 1f3a9c0 by bob@example.com at https://example.com/a:b",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_redacting_twice_changes_nothing_more() -> None:
    text = (
        f'password=hunter2 token: "abc" {GHP} {AWS}\n'
        "Authorization: Bearer abcdef\nhttps://u:p@h/\n"
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"
    )
    once = redact(text)
    assert redact(once) == once
    assert "hunter2" not in once and GHP not in once and "MIIEvQ" not in once
