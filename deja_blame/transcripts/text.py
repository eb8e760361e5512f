"""Small text rules of the format: user-text cleaning, the 1 MiB cap, times, paths."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from urllib.parse import unquote

from deja_blame.transcripts import patterns as P

CONTENT_CAP = 1024 * 1024  # bytes of UTF-8 per message


def cap_text(text: str, cap: int = CONTENT_CAP) -> str:
    """Cut ``text`` to at most ``cap`` bytes of UTF-8, on a character boundary."""
    if len(text) * 4 <= cap:  # cheap exit: even all-4-byte chars fit
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= cap:
        return text
    return data[:cap].decode("utf-8", "ignore")


def clean_user_text(content: str) -> str:
    """USER_EXPLICIT content -> what the person typed (format section 3)."""
    # The IDE's approval lines ("Comments on artifact URI: ...") can stand before
    # the wrapper: they go first, so the wrapper is then found at a line start.
    text = (
        P.ARTIFACT_COMMENT.sub("", content) if "Comments on artifact URI:" in content else content
    )
    opening = P.USER_REQUEST_OPEN.match(text) or P.USER_REQUEST_LINE.search(text)
    if opening and P.USER_REQUEST_CLOSE.search(text, opening.end()):
        head, tail = text[: opening.start()], text[opening.end() :]
        # Only the wrapper's own closing tag goes; blocks after it stay for step 2.
        text = head + P.USER_REQUEST_CLOSE.sub("", tail, count=1)
    text = P.METADATA_BLOCK.sub("", text)
    return text.strip()


def strip_step_header(content: str) -> str:
    """A tool step's body: its content minus the leading Created At/Completed At lines."""
    # Walks line starts instead of splitting: bodies run to megabytes, headers to two lines.
    pos = 0
    first = True
    while True:
        end = content.find("\n", pos)
        line = content[pos:] if end < 0 else content[pos:end]
        if not (P.STEP_HEADER.match(line) or (first and not line.strip())):
            break
        first = False
        if end < 0:
            return ""
        pos = end + 1
    return content[pos:].strip() if pos else content.strip()


# 2026-02-11T15:31:21.340Z, 2026-07-17T09:00:00Z: UTC, written as the canonical form is,
# with or without a fraction (Claude Code writes milliseconds): nearly every record's time
_UTC_TIME = re.compile(
    r"([1-9]\d{3}-\d\d-\d\d)T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,9}))?Z", re.ASCII
)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_DAY_STARTS: dict[str, int | None] = {}  # a day's text -> its first second (None: no day)
# the last time read by its fields, and what it gave
_LAST_TIME: tuple[str | None, tuple[str, float]] = (None, ("", 0.0))


def normalise_time(value: object) -> tuple[str | None, float | None]:
    """RFC 3339 text -> (canonical UTC text with Z, epoch seconds); (None, None) if unusable."""
    global _LAST_TIME
    if type(value) is str:
        last = _LAST_TIME
        if value == last[0]:
            return last[1]  # a reader's record time, asked again for its seconds
        m = _UTC_TIME.fullmatch(value)
        if m is not None:
            got = _utc_time(m)
            if got is not None:
                _LAST_TIME = (value, got)  # one binding: threads see a pair or the other
                return got
    return parse_time(value)


def _utc_time(m: re.Match[str]) -> tuple[str, float] | None:
    """``parse_time`` of a UTC time the canonical way round (``_UTC_TIME``), without
    making a datetime: a transcript's times run to a record each (a third of
    ``deja index``'s CPU on real Claude Code transcripts went to the full parse). The
    same text and the same float: ``datetime.timestamp`` divides whole microseconds
    by 10**6 as this does. None where the day is no day (the full parse says so)."""
    day, hours, minutes, seconds, fraction = m.groups()
    start = _DAY_STARTS.get(day, -1)
    if start == -1:
        try:
            parsed = date.fromisoformat(day)
            start = (parsed.toordinal() - _EPOCH_ORDINAL) * 86_400
        except ValueError:
            start = None
        if len(_DAY_STARTS) >= 4096:
            _DAY_STARTS.clear()
        _DAY_STARTS[day] = start
    if start is None:
        return None
    micro = int((fraction + "000000")[:6]) if fraction else 0
    whole = start + int(hours) * 3600 + int(minutes) * 60 + int(seconds)
    head = m.string[:19]
    if micro == 0:
        text = head + "Z"
    elif micro % 1000 == 0:
        text = f"{head}.{micro // 1000:03d}Z"
    else:
        text = f"{head}.{micro:06d}Z"
    return text, (whole * 1_000_000 + micro) / 1_000_000


def parse_time(value: object) -> tuple[str | None, float | None]:
    """``normalise_time`` by a full parse: every form RFC 3339 allows (offsets, a space
    for the ``T``, any fraction)."""
    if not isinstance(value, str) or not value:
        return None, None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python <3.11 fromisoformat wants exactly 3 or 6 fraction digits: pad/cut.
    m = re.match(r"^(.*T\d\d:\d\d:\d\d)\.(\d+)(.*)$", text)
    if m:
        frac = (m.group(2) + "000000")[:6]
        text = f"{m.group(1)}.{frac}{m.group(3)}"
    try:
        dt = datetime.fromisoformat(text.replace(" ", "T", 1) if "T" not in text else text)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        # 9999-12-31T23:59:59-01:00 is past the last datetime once made UTC
        dt = dt.astimezone(timezone.utc)
        return format_time(dt), dt.timestamp()
    except (ValueError, OverflowError):
        return None, None


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def int64(value: object) -> int | None:
    """``value`` if it is an integer the index (SQLite, orjson) can store, else None.

    JSON numbers have no bound: a step index, exit code or hunk position past
    64 bits is as good as absent.
    """
    if isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX:
        return value
    return None


def int64_text(digits: str) -> int | None:
    """An integer written in a transcript's text (``-?\\d+``), if storable (see ``int64``)."""
    if len(digits.lstrip("-")) > 19:  # also keeps int() away from its 4,300-digit limit
        return None
    return int64(int(digits))


def format_time(dt: datetime) -> str:
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        if dt.microsecond % 1000 == 0:
            base += f".{dt.microsecond // 1000:03d}"
        else:
            base += f".{dt.microsecond:06d}"
    return base + "Z"


# 2026-07-17T09:00:00Z   (what clients write: UTC, whole seconds)
_CANONICAL_TIME = re.compile(r"[1-9]\d{3}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\dZ", re.ASCII)
_DAY_EPOCHS: dict[str, float] = {}


def record_epoch(value: object) -> float | None:
    """A record's ``created_at`` as epoch seconds (None when unusable); the
    canonical ``2026-07-17T09:00:00Z`` without a full parse (this runs per record)."""
    if type(value) is str and len(value) == 20 and _CANONICAL_TIME.fullmatch(value):
        day = value[:10]
        base = _DAY_EPOCHS.get(day)
        if base is None:
            parsed = normalise_time(day + "T00:00:00Z")[1]
            if parsed is not None:
                if len(_DAY_EPOCHS) > 4096:
                    _DAY_EPOCHS.clear()
                base = _DAY_EPOCHS[day] = parsed
        if base is not None:
            return base + int(value[11:13]) * 3600 + int(value[14:16]) * 60 + int(value[17:19])
    return normalise_time(value)[1]


def epoch_of(at: str | None) -> float | None:
    # record_epoch is normalise_time(at)[1], without a full parse of the canonical form
    return record_epoch(at) if at else None


_WINDOWS_DRIVE = re.compile(r"^/?([A-Za-z]):[\\/]")


def normalise_path(raw: str) -> str:
    """file:// URIs decoded; Windows paths with forward slashes (drive kept); no trailing dot.

    ``file:///C:/Users/u/x`` and ``C:\\Users\\u\\x`` both become ``C:/Users/u/x``.
    """
    path = raw.strip().strip("`'\"")
    if path.lower().startswith("file://"):
        path = unquote(path[7:])
        if path.startswith("localhost/"):
            path = path[9:]
    m = _WINDOWS_DRIVE.match(path)
    if m:
        path = m.group(1).upper() + ":/" + path[m.end() :].replace("\\", "/")
    if len(path) > 1:
        path = path.rstrip("/")
    return path


_DRIVE_ROOT = re.compile(r"[A-Za-z]:/")


def is_absolute(path: str) -> bool:
    return path.startswith("/") or on_a_drive(path)


def on_a_drive(path: str) -> bool:
    """A normalised Windows path (``C:/Users/bob``): its session ran on Windows."""
    return _DRIVE_ROOT.match(path) is not None


def common_directory(a: str | None, b: str) -> str:
    """The deepest directory shared by ``a`` (a directory, or None) and ``b`` (a directory)."""
    if a is None:
        return b
    pa, pb = a.split("/"), b.split("/")
    n = 0
    for x, y in zip(pa, pb):
        if x != y:
            break
        n += 1
    shared = "/".join(pa[:n])
    return shared or "/"


def parent_directory(path: str) -> str:
    head, _, _ = path.rpartition("/")
    if not head:
        return "/"
    if re.match(r"^[A-Za-z]:$", head):
        return head + "/"
    return head


def excerpt(text: str, head: int, tail: int) -> str:
    """The first ``head`` and last ``tail`` characters, saying how many are left out
    (the rest stays in the transcript, where the index reads it back from)."""
    return excerpt_of(text[:head], text[-tail:], len(text) - head - tail)


def excerpt_of(head: str, tail: str, cut: int) -> str:
    """``excerpt`` from its parts: the text's start, its end and how many characters
    lie between them (the index stores only the two parts and rebuilds the rest)."""
    return f"{head}\n[... {cut} more characters, kept only in the transcript ...]\n{tail}"
