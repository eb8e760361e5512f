"""``deja hooks install | uninstall | status``: the hook scripts and git config they need.

After pre-commit's installer: our script carries an ID line, so we can tell it
from a foreign hook; a foreign hook (a person's, husky's, pre-commit's own) is
moved aside to ``<hook>.pre-deja`` and run first by ours; uninstall puts it
back. Not ``<hook>.legacy``: pre-commit's script uses that name for the hook
*it* chains, and would find itself there. If pre-commit later moves our script
to ``<hook>.legacy``, it runs it, and uninstall still finds and removes it.

``core.hooksPath`` is honoured (``git rev-parse --git-path hooks``). Install
also adds ``notes.rewriteRef=refs/notes/deja`` (so git itself copies notes on
amend and rebase) and ``notes.rewriteMode=concatenate`` when unset (the mode
whose result deja can read back; ``cat_sort_uniq`` would sort JSON lines).
What install changed is recorded in ``.git/deja/install.json`` so that
uninstall restores the repository exactly: hooks, config keys, directories.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import pygit2

from deja_blame import statefile
from deja_blame.errors import DejaError
from deja_blame.gitutil import run_git, workdir
from deja_blame.notes.schema import NOTES_REF
from deja_blame.notes.store import deja_dir

HOOK_TYPES = ("post-commit", "post-rewrite")
ID_MARKER = b"ID: deja-blame-hook-5d1e8c2a"
CHAIN_SUFFIX = ".pre-deja"
# pre-commit's hook scripts carry one of these (pre_commit/commands/install_uninstall.py)
PRE_COMMIT_HASHES = (
    b"138fd403232d2ddd5efb44317e38bf03",
    b"4d9958c90bc262f47553e2c073f14cfe",
    b"d8ee923c46731b42cd95cc869add4062",
    b"49fd668cb42069aa1b6048464be5d395",
    b"79f09a650522a87b0da915d0d983b2de",
    b"e358c9dae00eac5d06b38dfdb1e33a8c",
)
STATE_FILE = "install.json"
STATE_BYTES = 1024 * 1024
REWRITE_REF = "notes.rewriteRef"
REWRITE_MODE = "notes.rewriteMode"


def budget_in_force(timeout: list[str], background: list[str]) -> float:
    """The time budget the hook script applies, as the script works it out: the
    configured deja.hook.timeout when it is a plain positive number, else 30 s in
    the background (the default) and 2 s in the foreground."""
    from deja_blame.hooks.run import BACKGROUND_TIMEOUT, DEFAULT_TIMEOUT

    in_background = (background or ["true"])[0].strip().lower() not in ("false", "no", "off", "0")
    default = BACKGROUND_TIMEOUT if in_background else DEFAULT_TIMEOUT
    raw = (timeout or [""])[0].strip()
    try:
        value = float(raw) if raw and not raw.startswith(".") else default
    except ValueError:
        value = default
    return value if value > 0 else default


def template() -> str:
    """The hook script template, read from the installed package."""
    return (
        resources.files("deja_blame").joinpath("resources", "hook-tmpl").read_text(encoding="utf-8")
    )


def render(hook: str, python: str | None = None) -> str:
    text = template()
    text = text.replace("@HOOK@", shlex.quote(hook))
    return text.replace("@PYTHON@", shlex.quote(python or sys.executable))


def _head(path: Path) -> bytes:
    return statefile.read_bytes(path, 4096) or b""  # a FIFO planted as a hook: no hang


def is_ours(path: Path) -> bool:
    return path.is_file() and ID_MARKER in _head(path)


def kind_of(path: Path) -> str | None:
    """'deja', 'pre-commit', 'foreign', or None when there is no hook file."""
    if not os.path.lexists(path):
        return None
    head = _head(path)
    if ID_MARKER in head:
        return "deja"
    if any(h in head for h in PRE_COMMIT_HASHES):
        return "pre-commit"
    return "foreign"


def hooks_dir(repo: pygit2.Repository) -> Path:
    """Where git looks for hooks: core.hooksPath when set, else the common .git/hooks."""
    root = workdir(repo)
    out = run_git(root, ["rev-parse", "--git-path", "hooks"]).stdout.decode().strip()
    path = Path(out).expanduser()
    return path if path.is_absolute() else (root / path)


def tracked_hooks_dir(root: Path, hooks: Path) -> str | None:
    """``hooks`` relative to the work tree when git tracks files in it (a team's shared
    ``.githooks``), else None."""
    try:
        rel = hooks.resolve().relative_to(root.resolve())
    except ValueError:
        return None  # outside the work tree (.git/hooks, ~/.githooks)
    if rel.parts and rel.parts[0] == ".git":
        return None
    proc = run_git(root, ["ls-files", "-z", "--", rel.as_posix() or "."], check=False)
    return rel.as_posix() if proc.returncode == 0 and proc.stdout.strip(b"\0") else None


def _config_values(root: Path, key: str, scope: str | None = None) -> list[str]:
    args = ["config"] + ([scope] if scope else []) + ["--get-all", key]
    proc = run_git(root, args, check=False)
    return proc.stdout.decode().splitlines() if proc.returncode == 0 else []


def _section_exists(root: Path, section: str) -> bool:
    proc = run_git(root, ["config", "--local", "--get-regexp", f"^{section}\\."], check=False)
    return proc.returncode == 0 and bool(proc.stdout.strip())


def _state_path(repo: pygit2.Repository) -> Path:
    return deja_dir(repo) / STATE_FILE


def load_state(repo: pygit2.Repository) -> dict[str, Any] | None:
    try:
        doc = orjson.loads(statefile.read_bytes(_state_path(repo), STATE_BYTES) or b"")
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None


@dataclass
class HooksReport:
    hooks_dir: str
    actions: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"hooks_dir": self.hooks_dir, "actions": self.actions}


def install(repo: pygit2.Repository, python: str | None = None) -> HooksReport:
    root = workdir(repo)
    hooks = hooks_dir(repo)
    ddir = deja_dir(repo)
    state = load_state(repo)
    if state is None:
        state = {
            "hooks_dir": str(hooks),
            "created_hooks_dir": not hooks.exists(),
            "created_deja_dir": not ddir.exists(),
            "chained": [],
            "config_added": [],
            "config_set": [],
            "sections_created": [],
        }
    elif Path(state.get("hooks_dir", "")) != hooks:
        raise DejaError(
            f"deja's hooks are installed in {state.get('hooks_dir')}, but git now looks in {hooks}",
            hint="deja hooks uninstall, then deja hooks install",
        )
    report = HooksReport(hooks_dir=str(hooks))
    # Check everything before changing anything.
    tracked = tracked_hooks_dir(root, hooks)
    if tracked is not None:
        raise DejaError(
            f"core.hooksPath is {tracked}, a directory this repository tracks: deja's hooks"
            " there (with this machine's Python path) would be committed for everyone",
            hint=(
                "as pre-commit does, deja refuses; call 'deja hooks run post-commit' and"
                " 'deja hooks run post-rewrite' from the team's hooks, or"
                " 'git config --unset core.hooksPath' to use .git/hooks"
            ),
        )
    for hook in HOOK_TYPES:
        path = hooks / hook
        chained = hooks / (hook + CHAIN_SUFFIX)
        if kind_of(path) not in (None, "deja") and os.path.lexists(chained):
            raise DejaError(
                f"cannot chain the existing {path}: {chained.name} is already there",
                hint=f"move {chained} out of the way, then: deja hooks install",
            )
    hooks.mkdir(parents=True, exist_ok=True)
    for hook in HOOK_TYPES:
        path = hooks / hook
        kind = kind_of(path)
        if kind not in (None, "deja"):
            os.rename(path, hooks / (hook + CHAIN_SUFFIX))
            state["chained"].append(hook)
            report.actions.append(f"moved the existing {kind} {hook} hook to {hook}{CHAIN_SUFFIX}")
        # a new file beside it (a link planted at the temporary name is removed, never
        # written through), then renamed over the hook
        statefile.write_bytes(path, render(hook, python).encode("utf-8"), mode=0o755)
        report.actions.append(f"{'updated' if kind == 'deja' else 'installed'} {path}")
    # git config: carry notes on amend and rebase
    had_section = _section_exists(root, "notes")
    if NOTES_REF not in _config_values(root, REWRITE_REF):
        run_git(root, ["config", "--local", "--add", REWRITE_REF, NOTES_REF])
        state["config_added"].append([REWRITE_REF, NOTES_REF])
        report.actions.append(f"git config --add {REWRITE_REF} {NOTES_REF}")
    if not _config_values(root, REWRITE_MODE):
        run_git(root, ["config", "--local", REWRITE_MODE, "concatenate"])
        state["config_set"].append([REWRITE_MODE, "concatenate"])
        report.actions.append(f"git config {REWRITE_MODE} concatenate")
    if not had_section and _section_exists(root, "notes"):
        state["sections_created"].append("notes")
    ddir.mkdir(parents=True, exist_ok=True)
    statefile.write_bytes(
        _state_path(repo), orjson.dumps(state, option=orjson.OPT_INDENT_2) + b"\n"
    )
    return report


def uninstall(repo: pygit2.Repository) -> HooksReport:
    root = workdir(repo)
    state = load_state(repo)
    hooks = Path(state["hooks_dir"]) if state and state.get("hooks_dir") else hooks_dir(repo)
    report = HooksReport(hooks_dir=str(hooks))
    for hook in HOOK_TYPES:
        chained = hooks / (hook + CHAIN_SUFFIX)
        # ours is at <hook>, or at <hook>.legacy if pre-commit was installed over it
        for name in (hook, hook + ".legacy"):
            path = hooks / name
            if not is_ours(path):
                continue
            os.remove(path)
            if os.path.lexists(chained):
                os.rename(chained, path)
                report.actions.append(f"restored {name} (was {chained.name})")
            else:
                report.actions.append(f"removed {path}")
            break
        else:
            if kind_of(hooks / hook) is not None:
                report.actions.append(f"left the {kind_of(hooks / hook)} {hook} hook alone")
    if state is not None:
        for key, value in state.get("config_added", []):
            if value in _config_values(root, key, "--local"):
                run_git(
                    root, ["config", "--local", "--unset", key, f"^{_regex(value)}$"], check=False
                )
                report.actions.append(f"git config --unset {key} {value}")
        for key, value in state.get("config_set", []):
            if _config_values(root, key, "--local") == [value]:
                run_git(root, ["config", "--local", "--unset", key], check=False)
                report.actions.append(f"git config --unset {key}")
        for section in state.get("sections_created", []):
            if not _section_exists(root, section):
                run_git(root, ["config", "--local", "--remove-section", section], check=False)
        try:
            _state_path(repo).unlink()
        except OSError:
            pass
        if state.get("created_hooks_dir"):
            try:
                hooks.rmdir()  # only when empty
            except OSError:
                pass
        if state.get("created_deja_dir"):
            shutil.rmtree(deja_dir(repo), ignore_errors=True)
    return report


def _regex(value: str) -> str:
    return "".join("\\" + c if c in ".^$*+?()[]{}|\\" else c for c in value)


def status(repo: pygit2.Repository) -> dict[str, Any]:
    root = workdir(repo)
    hooks = hooks_dir(repo)
    doc: dict[str, Any] = {"hooks_dir": str(hooks), "hooks": {}, "config": {}}
    installed = True
    for hook in HOOK_TYPES:
        path = hooks / hook
        kind = kind_of(path)
        legacy = hooks / (hook + ".legacy")
        chained = hooks / (hook + CHAIN_SUFFIX)
        if kind == "deja":
            state = "installed"
        elif kind == "pre-commit" and is_ours(legacy):
            state = "installed (run by pre-commit's hook)"
        elif kind is None:
            state = "not installed"
            installed = False
        else:
            state = f"not installed ({kind} hook there)"
            installed = False
        python = None
        for candidate in (path, legacy):
            if is_ours(candidate):
                for line in (statefile.read_text(candidate, 64 * 1024) or "").splitlines():
                    if line.startswith("DEJA_PYTHON="):
                        python = shlex.split(line.partition("=")[2] or "''")[0]
                break
        doc["hooks"][hook] = {
            "path": str(path),
            "state": state,
            "chained": str(chained) if os.path.lexists(chained) else None,
            "chained_kind": kind_of(chained),
            "python": python,
            "python_ok": bool(python and os.access(python, os.X_OK)),
        }
    doc["installed"] = installed
    doc["budget_seconds"] = budget_in_force(
        _config_values(root, "deja.hook.timeout"),
        _config_values(root, "deja.hook.background"),
    )
    doc["config"] = {
        REWRITE_REF: _config_values(root, REWRITE_REF),
        REWRITE_MODE: next(iter(_config_values(root, REWRITE_MODE)), None),
        "deja.hook.background": (_config_values(root, "deja.hook.background") or ["true"])[0],
        "deja.hook.timeout": next(iter(_config_values(root, "deja.hook.timeout")), None),
        "deja.notes.prompts": (_config_values(root, "deja.notes.prompts") or ["false"])[0],
    }
    log = deja_dir(repo) / "hook.log"
    last = None
    try:
        lines = (statefile.read_text(log, 4 * 1024 * 1024) or "").splitlines()
        last = next((ln for ln in reversed(lines) if " deja: " in ln), None)
    except OSError:
        pass
    doc["last_warning"] = last
    from deja_blame.hooks import late
    from deja_blame.notes.history_state import HistoryState

    doc["late_notes"] = [r.commit for r in late.late_records(deja_dir(repo))]
    # whether a pass over the whole history (``deja annotate --all``, or the hook's
    # background share of it) ever finished here: the commits made before the hooks
    # have notes only after one. Read from .git/deja alone; whether the pass is
    # still current needs the index (``deja doctor``'s ``history notes``).
    doc["history_pass"] = HistoryState(repo).done is not None
    return doc
