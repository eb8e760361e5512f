"""One escaping function per output kind, for every field that came from a
transcript or a note (agent names, session ids and titles, requests, commands,
paths, models, times, summaries): what a stranger wrote is shown as text, never
acted on or rendered.

- ``terminal``: one line for a terminal (``deja blame/why/show/sessions/stats/doctor``,
  the MCP server's text): escape sequences and other control characters gone, the
  bidirectional controls gone ("Trojan Source"), a newline made a space (it would
  start a line that looks like deja's own). ``terminal_lines`` keeps a text's own
  lines for a block the caller indents; ``inert`` is what both build on.
- ``code``: a line of a file for a terminal (``deja blame``, ``deja why``): each
  control character shown as ``<U+XXXX>`` rather than removed, so a line that hides
  code (a bidi override, an escape sequence that makes text invisible) shows that
  something is there, as an editor does, and acts on nothing.
- ``markdown``: the Markdown report (a pull-request comment): one line, HTML
  escaped, Markdown punctuation backslash-escaped, table pipes and backticks as
  entities, no ``@mention``. ``markdown_code`` puts it in ``<code>``.
- ``html``: the HTML reports: control characters gone, ``html.escape`` (quotes too).
- ``lsp_markdown``: the editor's hover and lens text: one line, every character
  Markdown gives a meaning backslash-escaped (no link, no image fetched on hover).

JSON keeps the text exactly: a JSON string is inert (``jsonout`` writes the
control characters as ``\\uXXXX``).
"""

from __future__ import annotations

import re

# ANSI/VT escape sequences and other control characters from transcript text
# must never reach the terminal as commands: CSI and OSC sequences whole (in their
# ESC and their one-character C1 forms, U+009B and U+009D), then any C0 or C1
# control left (a lone ESC, BEL, DCS U+0090, ...), except tab and newline.
# The bidirectional controls go too: U+202E reverses what follows on screen, so
# text could show other code than it holds ("Trojan Source").
_CONTROL = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_LINE_BREAK = re.compile("[\n\u2028\u2029]")
# one character at a time, for ``code``: what _CONTROL removes, and the line breaks
_CODE_CONTROL = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)

# Markdown punctuation that could start emphasis, a link, an image, a heading or strike.
_MD_PUNCT = re.compile(r"([\\*_\[\]()#!~])")
# every character LSP clients' Markdown gives a meaning (VS Code's, Neovim's, Emacs')
_LSP_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!<>|~&:=\"'])")


def inert(text: str) -> str:
    """``text`` with escape sequences and control characters removed; its own lines kept."""
    return _CONTROL.sub("", text)


def terminal(text: object) -> str:
    """A field for a terminal, on one line: inert, each line break a space."""
    if text is None:
        return ""
    return _LINE_BREAK.sub(" ", inert(str(text)))


# what ``code`` shows a control character as, found again (a cut never splits one)
CODE_MARKER = re.compile(r"<U\+[0-9A-F]{4,6}>")


def code(text: object) -> str:
    """A line of a file for a terminal: its line ending dropped, every other control
    character (an escape sequence's ESC, a bidi override) shown as ``<U+XXXX>``."""
    line = "" if text is None else str(text)
    line = line[:-1] if line.endswith("\n") else line
    line = line[:-1] if line.endswith("\r") else line
    return _CODE_CONTROL.sub(lambda m: f"<U+{ord(m.group()):04X}>", line)


def terminal_lines(text: object) -> list[str]:
    """A field's own lines, each inert (the caller indents them: no line of a
    transcript starts where deja's own lines do)."""
    return [] if text is None else inert(str(text)).splitlines()


def shorten(text: str | None, width: int) -> str:
    """A field on one line, white space runs made one space, cut at ``width`` with an ellipsis."""
    if not text:
        return ""
    one = " ".join(inert(text).split())
    return one if len(one) <= width else one[: max(0, width - 1)] + "…"


def without_code(text: str | None) -> str:
    """An agent's words with its fenced code blocks (Markdown's three backquotes) shown as
    ``[code]``: an edit's block (Aider's SEARCH/REPLACE, a file's text) flattened on one
    line says nothing, and the edit itself is shown beside it (``deja why``). A fence
    left open ends the text. Split, not a regex: linear on any text."""
    if not text or "```" not in text:
        return text or ""
    parts = text.split("```")
    return " [code] ".join(parts[::2]).strip()


def clip(text: object, limit: int) -> str:
    """``text`` cut at ``limit`` characters, with a marker that says how much was cut:
    a 1 MiB prompt or a 5 MB line in a transcript would drown a terminal or a page
    (``deja why``, the HTML report; ``--json`` keeps every text whole)."""
    whole = "" if text is None else str(text)
    if len(whole) <= limit:
        return whole
    return f"{whole[:limit]}… [{len(whole) - limit:,} more characters]"


def markdown(text: str | None, width: int | None = None) -> str:
    """A field made inert for Markdown (and table cells), on one line."""
    if not text:
        return ""
    one = shorten(text, width) if width else " ".join(inert(text).split())
    one = one.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    one = _MD_PUNCT.sub(r"\\\1", one)
    return (
        one.replace("|", "&#124;")
        .replace("`", "&#96;")
        .replace("@", "@&#8203;")  # no @mentions from a prompt
    )


def markdown_code(text: str | None, width: int | None = None) -> str:
    return f"<code>{markdown(text, width)}</code>" if text else ""


def html(text: object) -> str:
    """A field for an HTML page: control characters first (an escape sequence is no
    text, in a browser or a pager), then every character HTML gives a meaning."""
    import html as _html  # here: html.entities is large, and only the HTML reports need it

    return _html.escape("" if text is None else inert(str(text)), quote=True)


def lsp_markdown(text: str) -> str:
    """The editor's one escaping of a field as Markdown text (LSP hover, lens): control
    characters gone, every character Markdown gives a meaning backslash-escaped (no
    markup, no link, no image, no HTML), one line (a newline would start a block)."""
    return _LSP_PUNCT.sub(r"\\\1", " ".join(inert(text).split()))
