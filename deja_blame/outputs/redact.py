"""Secrets out of text that leaves deja (handoff prompts, reports): ``redact(text)``.

Transcripts hold whatever the agent saw: ``cat .env``, a curl with a bearer
token, a key pasted into the chat. Anything deja passes on goes through
``redact`` first. Each secret becomes ``[redacted]``; for assignments and
headers the name is kept (``password=[redacted]``) so the text still reads.

The rules lean towards leaving code alone: ``token = os.environ["TOKEN"]`` or
``password=$PASSWORD`` name a secret without holding one, and are kept.
"""

from __future__ import annotations

import os
import re

__all__ = ("REDACTED", "redact", "redact_for_sharing")

REDACTED = "[redacted]"

# A token must not be glued to more token characters on either side, or a
# longer identifier (``mask-...``, ``xsk-...``) would be cut in the middle.
_L = r"(?<![A-Za-z0-9_\-])"
_R = r"(?![A-Za-z0-9_\-])"

# -----BEGIN RSA PRIVATE KEY----- ... -----END RSA PRIVATE KEY-----
_PK_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PK_END = re.compile(r"-----END [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
# a block cut off before its END (a truncated transcript): any
# "Proc-Type: 4,ENCRYPTED" header lines, then the base64 lines
_PK_BODY = re.compile(r"(?:\r?\n[A-Za-z-]{1,40}:[^\n]*)*(?:\r?\n[ \t]*[A-Za-z0-9+/=]{16,})*")
_PK_MAX = 16 * 1024  # a key block is a few KB; an END further away is not its END

# Tokens recognised by their shape alone.
_TOKENS = [
    # AKIAIOSFODNN7EXAMPLE (AWS access key id; ASIA = temporary credentials)
    re.compile(_L + r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _R),
    # AIzaSyD-abcdefghijklmnopqrstuvwxyz12345 (Google / GCP API key)
    re.compile(_L + r"AIza[0-9A-Za-z_\-]{35}" + _R),
    # ghp_xxxx (GitHub personal), gho_ (OAuth), ghs_ (app server), ghu_ (user), ghr_ (refresh)
    re.compile(_L + r"gh[pousr]_[A-Za-z0-9]{20,255}" + _R),
    # github_pat_11ABCDEFG0_xxxx (fine-grained GitHub token)
    re.compile(_L + r"github_pat_[A-Za-z0-9_]{20,255}" + _R),
    # sk-proj-xxxx, sk-ant-api03-xxxx, sk-xxxx (OpenAI, Anthropic, Stripe sk_live_ below)
    re.compile(_L + r"sk-[A-Za-z0-9_\-]{20,}" + _R),
    # sk_live_xxxx / rk_live_xxxx (Stripe secret and restricted keys)
    re.compile(_L + r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}" + _R),
    # xoxb-123-456-abc (Slack bot, user, app-level, workspace tokens)
    re.compile(_L + r"xox[bpasr]-[A-Za-z0-9\-]{10,}" + _R),
    # glpat-xxxxxxxxxxxxxxxxxxxx (GitLab personal access token)
    re.compile(_L + r"glpat-[A-Za-z0-9_\-]{20,}" + _R),
    # eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig (a JSON Web Token: header.payload.signature)
    re.compile(_L + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _R),
]

# Authorization: Bearer eyJhbGciOi...   /   authorization: token ghx...   /   Basic dXNlcjpwdw==
_AUTH_HEADER = re.compile(
    r"(?i)(?P<head>\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+)"
    r"(?P<value>[^\s\"',;]+)"
)
# X-Api-Key: abc123   /   X-Auth-Token: abc123   /   Private-Token: abc123
_KEY_HEADER = re.compile(
    r"(?i)(?P<head>\b(?:x-)?(?:api-key|auth-token|access-token|private-token)[ \t]*:[ \t]*)"
    r"(?P<value>[^\s\"',;]+)"
)
# a bearer token outside a header: "Bearer abcdef0123456789abcd"
_BEARER = re.compile(r"(?P<head>\bBearer\s+)(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)")

# https://user:hunter2@example.com/ -> the password of URL credentials
_URL_CREDENTIALS = re.compile(
    r"(?P<head>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^/\s:@]{1,200}:)"
    r"(?P<value>[^@\s/]{1,200})(?=@)"
)

# A name whose value is a secret: password, db_password, GITHUB_TOKEN,
# client_secret, api_key, apiKey, AWS_SECRET_ACCESS_KEY, private_key ...
# (``max_tokens`` and ``tokenizer`` are not: the word must end the name.)
_SECRET_NAME = re.compile(
    r"(?:passwd|password|passphrase|pwd|token|secret|api[_\-]?key|apikey"
    r"|access[_\-]?key|secret[_\-]?key|private[_\-]?key|auth[_\-]?key|credentials?)$",
    re.IGNORECASE,
)
# Candidates are whole names (the look-behind allows one start per name, which
# keeps long runs of ``a.a.a.a`` linear); the name is checked in code.
# password=hunter2, --token=abc, API_KEY = "abc", export GITHUB_TOKEN='abc'
_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z0-9_.\-]{1,100})(?P<sep>[ \t]*=[ \t]*)(?=[^\s=])"
)
# "password": "hunter2" (JSON), 'token': 'abc' (a Python dict)
_COLON_QUOTED = re.compile(
    r"(?<![A-Za-z0-9_.\-\"'])(?P<key>[\"']?[A-Za-z0-9_.\-]{1,100}[\"']?)"
    r"(?P<sep>[ \t]*:[ \t]*)(?=[\"'])"
)
# password: hunter2  (YAML, at the start of a line; one word, then an optional comment)
_COLON_YAML = re.compile(
    r"(?m)^(?P<indent>[ \t]*(?:-[ \t]+)?)(?P<key>[A-Za-z0-9_.\-]{1,100})(?P<sep>[ \t]*:[ \t]+)"
    r"(?=[^\s\"'#]\S*[ \t]*(?:\#.*)?$)"
)
_BARE_VALUE = re.compile(r"[^\s\"'&;,)\]}]+")
_WORD_VALUE = re.compile(r"\S+")

# Values that name a secret without holding one: an expression, a variable
# reference, an empty or placeholder value.
_NOT_A_VALUE = re.compile(
    r"""^(?:
        \$.*                              # $TOKEN, ${TOKEN}, $(cat token)
      | %[A-Za-z_]+%                      # %TOKEN% (Windows)
      | <[^>]*>                           # <your token here>
      | \{\{.*\}\}                        # {{ secrets.TOKEN }}
      | None|null|nil|true|false|undefined|True|False
      | [*x.]{0,}                         # empty, ****, xxxx
      | \[redacted\]
      | [A-Za-z_][\w.]*\s*[(\[].*         # getpass(), os.environ["X"], cfg.get("x")
      | [A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+   # settings.API_KEY, self.token
    )$""",
    re.VERBOSE | re.DOTALL,
)


def _value_span(text: str, start: int, bare: re.Pattern[str]) -> tuple[int, int] | None:
    """The value starting at ``start``: its inner span (quotes excluded), or None."""
    if text.startswith(REDACTED, start):
        return start, start + len(REDACTED)
    quote = text[start : start + 1]
    if quote in ("'", '"'):
        end = text.find(quote, start + 1)
        newline = text.find("\n", start + 1)
        if end < 0 or (0 <= newline < end):
            return None
        return start + 1, end
    m = bare.match(text, start)
    return (start, m.end()) if m else None


def _redact_keyed(pattern: re.Pattern[str], text: str, bare: re.Pattern[str]) -> str:
    """Values after secret names (``pattern`` finds name + separator) become ``[redacted]``."""
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        if m.start() < pos:
            continue  # inside a value already redacted (token=a=b)
        if not _SECRET_NAME.search(m.group("key").strip("\"'")):
            continue
        span = _value_span(text, m.end(), bare)
        if span is None:
            continue
        value = text[span[0] : span[1]]
        if _NOT_A_VALUE.match(value.strip()):
            continue
        out.append(text[pos : span[0]])
        out.append(REDACTED)
        pos = span[1]
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _redact_private_keys(text: str) -> str:
    out: list[str] = []
    pos = 0
    end: re.Match[str] | None = None
    no_more_ends = False
    for begin in _PK_BEGIN.finditer(text):
        if begin.start() < pos:
            continue
        # the next END is looked up once per END, not once per BEGIN: linear
        if end is not None and end.start() < begin.end():
            end = None
        if end is None and not no_more_ends:
            end = _PK_END.search(text, begin.end())
            no_more_ends = end is None
        if end is not None and end.start() - begin.end() <= _PK_MAX:
            stop = end.end()
        else:
            body = _PK_BODY.match(text, begin.end())
            stop = body.end() if body else begin.end()
        out.append(text[pos : begin.start()])
        out.append(REDACTED)
        pos = stop
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _head_repl(m: re.Match[str]) -> str:
    if m.group("value").startswith("$"):
        return m.group(0)
    return m.group("head") + REDACTED


def redact(text: str) -> str:
    """``text`` with every secret it recognises replaced by ``[redacted]``.

    Covers cloud access keys (``AKIA...``, ``ASIA...``, ``AIza...``), GitHub
    tokens (``ghp_`` ``gho_`` ``ghs_`` ``ghu_`` ``github_pat_``), other common API
    tokens (``sk-...``, ``xoxb-...``, ``glpat-...``), private key blocks,
    ``password=``/``token=``/``secret=``/``api_key=`` assignments (the value goes,
    the name stays), ``Authorization: Bearer ...`` headers and URL passwords.
    Idempotent: redacting twice changes nothing more.
    """
    if not text:
        return text
    text = _redact_private_keys(text)
    for pattern in _TOKENS:
        text = pattern.sub(REDACTED, text)
    text = _AUTH_HEADER.sub(_head_repl, text)
    text = _KEY_HEADER.sub(_head_repl, text)
    text = _BEARER.sub(_head_repl, text)
    text = _URL_CREDENTIALS.sub(_head_repl, text)
    text = _redact_keyed(_ASSIGN, text, _BARE_VALUE)
    text = _redact_keyed(_COLON_QUOTED, text, _BARE_VALUE)
    text = _redact_keyed(_COLON_YAML, text, _WORD_VALUE)
    return text


# A home directory names its user: /home/ana, /Users/ana, C:\Users\ana, /root
_HOME_DIR = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?:/home/[^/\s\"'`]+|/Users/[^/\s\"'`]+|/root(?=[/\s\"'`]|$)"
    r"|[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/][^\\/\s\"'`]+)",
    re.IGNORECASE,
)


def redact_for_sharing(text: str, root: str | None = None) -> str:
    """``text`` fit to leave the machine in something others read (a pushed note):
    secrets redacted, the repository's own directory written ``.`` (its files as
    repository-relative paths) and any home directory as ``~``: no user name, no
    folder layout."""
    if not text:
        return text
    if root and root not in ("/", ""):
        text = text.replace(root.rstrip("/") + "/", "./").replace(root.rstrip("/"), ".")
    home = os.path.expanduser("~").rstrip("/")
    if home and home != "~" and len(home) > 1:
        text = text.replace(home + "/", "~/")
    return _HOME_DIR.sub("~", redact(text))
