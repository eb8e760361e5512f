"""Files an agent wrote through its shell, with the content in the command line.

Agents write files with shell commands as often as with edit tools: a here
document (``cat > f <<'EOF'``, ``cat <<EOF >> f``, ``tee f <<EOF``), ``printf``
or ``echo`` redirected into a file, ``python - <<'EOF'`` whose script writes a
literal string to a literal path. Where the text is in the command, it is the
agent's text: ``shell_writes`` reads it out. Nothing is ever run: the command
is only parsed, and whatever depends on the shell (``$var``, ``$(...)``, a
backtick in an unquoted here document, a ``%`` directive of printf) makes that
write unknown and skipped. Other shell changes (``sed -i``, scripts) stay
unattributed. Whether the command ran is the caller's to say (its exit code).
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from dataclasses import dataclass

from deja_blame.models import Command, Edit

_HEREDOC = re.compile(r"<<(-?)\s*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z_][A-Za-z0-9_]*))")
_SHELL_MAGIC = re.compile(r"\$|`")
_PYTHON = re.compile(r"^(?:python3?|python3\.\d+)$")


@dataclass(frozen=True)
class ShellWrite:
    """``content`` written to ``path`` (as the command names it), appended or not."""

    path: str
    content: str
    append: bool = False


# The commands whose writes ``_one`` reads; one of them names every write it finds.
WRITER_NAMES = ("cat", "tee", "echo", "printf", "python")
_QUOTING = str.maketrans("", "", "'\"\\")


def shell_writes(command: str) -> list[ShellWrite]:
    """The writes ``command`` makes with content it holds itself, in order."""
    # Most commands name no writer (git, tests, builds, ls): they are not parsed. A
    # writer's name is its command word's last part, a stretch of the command's
    # text with at most quotes and backslashes taken out of it (the shell's
    # quoting), so it is in the command once those are out.
    bare = command.translate(_QUOTING)
    if not any(name in bare for name in WRITER_NAMES):
        return []
    return parsed_writes(command)


def parsed_writes(command: str) -> list[ShellWrite]:
    """``shell_writes`` by parsing every part of ``command``."""
    out: list[ShellWrite] = []
    bodies, head = _split_heredocs(command)
    k = 0
    folder = ""  # where ``cd DIR`` went: relative targets after it are under DIR
    for line in head:
        piped: tuple[str, bool] | None = None  # a here document ``cat`` passes on
        for part in _simple_commands(line):
            body = None
            if "<<" in part and k < len(bodies):
                body = bodies[k]
                k += 1
            elif piped is not None and _first_word(part) == "tee":
                body = piped  # cat <<'EOF' | tee -a f
            piped = None
            if _first_word(part) == "cd":
                folder = _cd(folder, part)
                continue
            writes = _one(part, body)
            if not writes and body is not None and _first_word(part) == "cat":
                piped = body
            out += [
                ShellWrite(posixpath.join(folder, w.path), w.content, w.append)
                if folder and not w.path.startswith(("/", "~")) and folder != "?"
                else w
                for w in writes
                if folder != "?" or w.path.startswith("/")
            ]
    return out


def _first_word(part: str) -> str:
    return part.split(None, 1)[0].rsplit("/", 1)[-1] if part.split() else ""


def _cd(folder: str, part: str) -> str:
    """The folder after ``cd DIR`` (relative to the command's own folder); "?" where
    the shell decides (``cd``, ``cd -``, ``$VAR``): relative writes after it are unknown."""
    try:
        words = shlex.split(part)
    except ValueError:
        return "?"
    if len(words) != 2 or folder == "?" or _SHELL_MAGIC.search(words[1]) or words[1] == "-":
        return "?"
    target = words[1]
    if target.startswith("~"):
        return "?"
    return posixpath.normpath(posixpath.join(folder, target)) if folder else target


def _split_heredocs(command: str) -> tuple[list[tuple[str, bool] | None], list[str]]:
    """The command's lines that are commands, and each here document's body with
    whether it is literal (a quoted delimiter); None for one never closed."""
    lines = command.split("\n")
    head: list[str] = []
    bodies: list[tuple[str, bool] | None] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        head.append(line)
        i += 1
        for m in _HEREDOC.finditer(line):
            strip_tabs = m.group(1) == "-"
            word = m.group(2) or m.group(3) or m.group(4)
            literal = m.group(4) is None or m.group(0).lstrip("<-").strip().startswith("\\")
            body: list[str] = []
            closed = False
            while i < len(lines):
                text = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if text == word:
                    closed = True
                    break
                body.append(text)
            bodies.append(("".join(b + "\n" for b in body), literal) if closed else None)
    return bodies, head


def _simple_commands(line: str) -> list[str]:
    """A command line cut at ``&&``, ``||``, ``;`` and ``|`` outside quotes."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            current.append(ch)
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < len(line):
                current.append(line[i + 1])
                i += 1
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch in ";|&":
            if ch == "&" and i + 1 < len(line) and line[i + 1] == ">":
                current.append(ch)  # &> is a redirect
            else:
                parts.append("".join(current))
                current = []
                if i + 1 < len(line) and line[i + 1] == ch:
                    i += 1
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _one(part: str, body: tuple[str, bool] | None) -> list[ShellWrite]:
    try:
        words = shlex.split(_HEREDOC.sub(" ", part), comments=False)
    except ValueError:
        return []
    if not words:
        return []
    target, append, rest = _redirect(words)
    name = words[0].rsplit("/", 1)[-1]
    text = None if body is None or (not body[1] and _SHELL_MAGIC.search(body[0])) else body[0]
    if name == "cat" and target and len(rest) == 1 and text is not None:
        return [ShellWrite(target, text, append)]
    if name == "tee" and text is not None:
        append = "-a" in rest[1:] or "--append" in rest[1:]
        files = [w for w in rest[1:] if not w.startswith("-")]
        return [ShellWrite(f, text, append) for f in files]
    if name in ("echo", "printf") and target and "$" not in part and "`" not in part:
        content = _echo(rest) if name == "echo" else _printf(rest)
        return [] if content is None else [ShellWrite(target, content, append)]
    if _PYTHON.match(name) and rest[1:] == ["-"] and text is not None:
        return _python_writes(text)
    return []


def _redirect(words: list[str]) -> tuple[str | None, bool, list[str]]:
    """The file stdout goes to (``>``, ``>>``), whether appended, and the other words."""
    target: str | None = None
    append = False
    rest: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        m = re.match(r"^(1?)(>>|>\|?)(.*)$", w)
        if m and not w.startswith("2"):
            append = m.group(2) == ">>"
            if m.group(3):
                target = m.group(3)
            elif i + 1 < len(words):
                target = words[i + 1]
                i += 1
        elif re.match(r"^\d?>&?\d*$", w) or w.startswith("2>"):
            if w in ("2>", ">") and i + 1 < len(words):
                i += 1  # stderr's file
        else:
            rest.append(w)
        i += 1
    return target, append, rest


def _echo(words: list[str]) -> str | None:
    args = words[1:]
    newline = True
    while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
        if "n" in args[0]:
            newline = False
        if "e" in args[0]:
            return None  # escapes a shell may or may not interpret
        args = args[1:]
    return " ".join(args) + ("\n" if newline else "")


def _printf(words: list[str]) -> str | None:
    if len(words) != 2 or "%" in words[1].replace("%%", ""):
        return None  # a format with directives: its arguments decide
    text = words[1].replace("%%", "%")
    out: list[str] = []
    i = 0
    escapes = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] not in escapes:
                return None
            out.append(escapes[text[i + 1]])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _python_writes(script: str) -> list[ShellWrite]:
    """``open("p", "w").write("...")`` (also inside ``with``) and
    ``Path("p").write_text("...")`` with literal arguments, in a script read from stdin."""
    try:
        tree = ast.parse(script)
    except (SyntaxError, ValueError):
        return []
    handles: dict[str, tuple[str, bool]] = {}
    out: list[ShellWrite] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                opened = _opened(item.context_expr)
                if opened and isinstance(item.optional_vars, ast.Name):
                    handles[item.optional_vars.id] = opened
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        text = _literal(node.args[0]) if len(node.args) == 1 else None
        if text is None:
            continue
        owner, method = node.func.value, node.func.attr
        if method == "write":
            opened = _opened(owner)
            if opened is None and isinstance(owner, ast.Name):
                opened = handles.get(owner.id)
            if opened is not None:
                out.append(ShellWrite(opened[0], text, opened[1]))
        elif method == "write_text" and isinstance(owner, ast.Call):
            name = owner.func.id if isinstance(owner.func, ast.Name) else None
            path = _literal(owner.args[0]) if len(owner.args) == 1 else None
            if name in ("Path", "PurePath") and path is not None:
                out.append(ShellWrite(path, text))
    return out


def _opened(node: ast.expr) -> tuple[str, bool] | None:
    """(path, appended) of ``open("p", "w"|"a")`` with literal arguments."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    if node.func.id != "open" or len(node.args) != 2:
        return None
    path, mode = _literal(node.args[0]), _literal(node.args[1])
    if path is None or mode is None or mode.strip("bt") not in ("w", "a"):
        return None
    return (path, "a" in mode) if "b" not in mode else None


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


SHELL_EDIT_BASE = 1 << 40  # edit ordinals of shell writes: past any tool edit's
WRITES_PER_COMMAND = 16


def command_edits(commands: list[tuple[int, Command]]) -> list[tuple[int, Edit]]:
    """(step, edit) for each write of the commands that succeeded (exit code 0): a
    file written whole, or lines appended. A command whose exit code is not known
    (yet) writes nothing here. Relative paths are taken from the command's cwd."""
    from deja_blame.transcripts.edits import whole_file_edit
    from deja_blame.transcripts.text import is_absolute, normalise_path

    out: list[tuple[int, Edit]] = []
    for step, cmd in commands:
        if cmd.exit_code != 0 or ("<<" not in cmd.command and ">" not in cmd.command):
            continue
        for k, w in enumerate(shell_writes(cmd.command)[:WRITES_PER_COMMAND]):
            path = normalise_path(w.path)
            if not is_absolute(path):
                if not cmd.cwd or path.startswith("~"):
                    continue
                path = posixpath.normpath(cmd.cwd.rstrip("/") + "/" + path)
            if path.startswith("/dev/"):
                continue
            edit = whole_file_edit(
                path, "shell_append" if w.append else "shell_write", w.content, cmd.at
            )
            if edit is None:
                continue
            if w.append:
                edit.hunks[0].new_start = None  # where the lines landed is not known
            edit.seq = SHELL_EDIT_BASE + cmd.seq * WRITES_PER_COMMAND + k
            edit.after_message = cmd.after_message
            out.append((step, edit))
    return out
