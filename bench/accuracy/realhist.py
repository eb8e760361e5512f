"""Real-history mode: consecutive releases of a real package replayed as agent
sessions and a person, in eight variants, scored line by line.

The releases are sdists (``pip download --no-deps --no-binary :all:
NAME==VERSION``) in one directory. Each release after the first is turned into
edits of the one before: every hunk of ``difflib``'s line diff goes to an agent
session (a ``replace_file_content`` or ``multi_replace_file_content`` step
whose diff block the transcript records, after a ``view_file``; new files are
``write_to_file``) or is typed by the person, and the person commits each
release. The simulator (``sim.py``) tracks who last wrote each line's text.

Variants (each alone, then ``all`` of them at once):

- ``plain``: the above;
- ``formatter``: the person adopts a formatter (``ruff format`` at a short line
  length) half way, and every later release is formatted the same way; lines
  it reflows keep their writer when their text, white space aside, is the same;
- ``renames``: the project's real layout change (``pkg/`` -> ``src/pkg/``) by
  ``git mv``, and one module renamed;
- ``squash``: the person commits every third release only;
- ``tweaks``: the person edits a few lines of each session's work before
  committing (a comment added, a name changed);
- ``reverts``: an agent's hunk is reverted by the person and typed back by the
  person in the next release (the text the session wrote is now the person's);
- ``moves``: the person moves functions an agent wrote to another file;
- ``all``: every one of them.

Ambiguous lines: where two adjacent lines have the same text (white space
aside) and different writers, either writer is right; their number is printed.
Blank lines trade writers as in the scripted scenarios.

    python bench/accuracy/realhist.py --sdists DIR [--package packaging] [-k VARIANT] [-v]
    python bench/accuracy/realhist.py --npm DIR --package semver --prettier DIR   # JavaScript
    python bench/accuracy/realhist.py --npm DIR --package immer --lang ts --prettier DIR
    python bench/accuracy/realhist.py --git-tags GITDIR --package uuid --lang go  # Go
    DEJA_BENCH_AGENT=mixed python bench/accuracy/realhist.py ...   # sessions of three agents

JavaScript: the releases are npm tarballs (``npm pack NAME@VERSION``), their
``.js``/``.ts`` files; the formatter is prettier (``--prettier``: a directory
where ``npm install prettier`` ran) at a short print width, in the project's
own style (``--prettier-options``). TypeScript (``--lang ts``): the tarballs'
``.ts`` sources (not ``.d.ts``), prettier's TypeScript parser.

Go: the releases are a git repository's tags (``--git-tags``: a repository or its
git directory, such as a mirror; ``--tags`` picks them, else the last eleven
``vX.Y.Z``), their ``.go`` files; the formatter is ``gofmt -s`` with the
``interface{}`` -> ``any`` rewrite (Go code is already gofmt's, so adopting a
formatter there is the simplifying pass).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from sim import PERSON, Line, Score, Session, Sim, normalise, required_count  # noqa: E402

VARIANTS = ("plain", "formatter", "renames", "squash", "tweaks", "reverts", "moves", "all")
MINUTE = 60
HOUR = 3600

Release = tuple[str, dict[str, str]]  # version, {path in the real layout: text}


# -- releases --------------------------------------------------------------------------


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def load_releases(sdists: Path, package: str) -> list[Release]:
    """Each sdist's Python modules of ``package``, oldest release first."""
    out: list[Release] = []
    for tar in sdists.glob(f"{package}-*.tar.gz"):
        version = tar.name[len(package) + 1 : -len(".tar.gz")]
        files: dict[str, str] = {}
        with tarfile.open(tar) as tf:
            for m in tf.getmembers():
                parts = m.name.split("/")[1:]
                if not m.isfile() or not m.name.endswith(".py"):
                    continue
                if parts[:2] == ["src", package] or parts[:1] == [package]:
                    data = tf.extractfile(m)
                    if data is not None:
                        text = data.read().decode("utf-8")
                        files["/".join(parts)] = (
                            text if text.endswith("\n") or not text else text + "\n"
                        )
        if files:
            out.append((version, files))
    out.sort(key=lambda r: _version_key(r[0]))
    return out


JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def _npm_releases(tarballs: Path, package: str, wanted: Callable[[str], bool]) -> list[Release]:
    out: list[Release] = []
    for tar in tarballs.glob(f"{package}-*.tgz"):
        version = tar.name[len(package) + 1 : -len(".tgz")]
        files: dict[str, str] = {}
        with tarfile.open(tar) as tf:
            for m in tf.getmembers():
                parts = m.name.split("/")[1:]
                if not m.isfile() or not wanted(m.name) or "node_modules" in parts:
                    continue
                data = tf.extractfile(m)
                if data is not None:
                    text = data.read().decode("utf-8")
                    files["/".join(parts)] = (
                        text if text.endswith("\n") or not text else text + "\n"
                    )
        if files:
            out.append((version, files))
    out.sort(key=lambda r: _version_key(r[0]))
    return out


TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


def load_npm_releases(tarballs: Path, package: str, lang: str = "js") -> list[Release]:
    """Each npm tarball's sources (``package/...``), oldest first: JavaScript and
    TypeScript for ``lang`` "js", TypeScript only (no ``.d.ts``) for "ts"."""

    def wanted(name: str) -> bool:
        if lang == "ts":
            return name.endswith(TS_SUFFIXES) and not re.search(r"\.d\.[mc]?ts$", name)
        return name.endswith(JS_SUFFIXES)

    return _npm_releases(tarballs, package, wanted)


GO_TAG = re.compile(r"v\d+\.\d+\.\d+")


def load_git_tag_releases(
    repo: Path, tags: list[str] | None = None, suffixes: tuple[str, ...] = (".go",), last: int = 11
) -> list[Release]:
    """The files of each tag of a git repository (a mirror's git directory will do),
    oldest first: ``tags`` in that order, else the last ``last`` ``vX.Y.Z`` tags by
    version. Vendored code and ``testdata`` are left out."""
    git = ["git", "--git-dir", str(_git_dir(repo))]
    if not tags:
        listed = subprocess.run(
            [*git, "tag", "--list"], capture_output=True, text=True, check=True
        ).stdout.split()
        tags = sorted((t for t in listed if GO_TAG.fullmatch(t)), key=_version_key)[-last:]
    out: list[Release] = []
    for tag in tags:
        listing = subprocess.run(
            [*git, "ls-tree", "-r", "-z", f"{tag}^{{tree}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        blobs: dict[str, str] = {}
        for entry in listing.split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            mode, kind, oid = meta.split()
            parts = path.split("/")
            if kind != "blob" or mode == "120000" or not path.endswith(suffixes):
                continue
            if "vendor" in parts or "testdata" in parts:
                continue
            blobs[path] = oid
        files: dict[str, str] = {}
        for path, oid in sorted(blobs.items()):
            text = subprocess.run(
                [*git, "cat-file", "blob", oid], capture_output=True, check=True
            ).stdout.decode("utf-8", "replace")
            files[path] = text if text.endswith("\n") or not text else text + "\n"
        if files:
            out.append((tag.removeprefix("v"), files))
    return out


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def flat_layout(files: dict[str, str], package: str) -> dict[str, str]:
    """Every release in one layout (``pkg/...``): the plain variants have no rename."""
    return {p.removeprefix("src/"): t for p, t in files.items()}


# -- the formatter ---------------------------------------------------------------------


def formatter(line_length: int) -> Callable[[str], str]:
    """``ruff format`` at ``line_length``, as a person's formatter run; the text
    unchanged where ruff cannot parse it."""

    def run(text: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "ruff", "format", f"--line-length={line_length}", "-"],
            input=text,
            capture_output=True,
            text=True,
        )
        return proc.stdout if proc.returncode == 0 else text

    return run


def gofmt(text: str) -> str:
    """``gofmt -s`` and the ``interface{}`` -> ``any`` rewrite, as a Go person's
    formatter pass; the text unchanged where gofmt cannot parse it."""
    proc = subprocess.run(
        ["gofmt", "-s", "-r", "interface{} -> any"], input=text, capture_output=True, text=True
    )
    return proc.stdout if proc.returncode == 0 else text


class Prettier:
    """prettier (from npm) as the person's formatter: one node process per batch of
    files, the project's quotes and semicolons kept, a short print width so it
    reflows (splits and joins, trailing commas)."""

    OPTIONS = {"printWidth": 72, "singleQuote": True, "semi": False, "trailingComma": "all"}

    def __init__(self, install: Path, options: dict[str, object] | None = None) -> None:
        self.options = {**self.OPTIONS, **(options or {})}
        self.module = str(install.resolve() / "node_modules" / "prettier")
        self.cache: dict[tuple[str, str], str] = {}

    def batch(self, files: dict[str, str]) -> dict[str, str]:
        todo = {p: t for p, t in files.items() if (p, t) not in self.cache}
        if todo:
            proc = subprocess.run(
                ["node", str(HERE / "prettier_batch.js")],
                input=json.dumps({"options": self.options, "files": todo}),
                capture_output=True,
                text=True,
                env={**os.environ, "PRETTIER_PATH": self.module},
                check=True,
            )
            for p, t in json.loads(proc.stdout).items():
                self.cache[(p, todo[p])] = t
        return {p: self.cache[(p, t)] for p, t in files.items()}

    def file(self, path: str) -> Callable[[str], str]:
        return lambda text: self.batch({path: text})[path]


# -- the replay ------------------------------------------------------------------------


class Replay:
    def __init__(
        self,
        sim: Sim,
        variant: str,
        seed: int,
        prettier: Prettier | None = None,
        lang: str | None = None,
    ) -> None:
        self.sim = sim
        self.prettier = prettier  # JavaScript: the formatter, and JS comments
        self.lang = lang or ("js" if prettier is not None else "py")
        self.variant = variant
        self.rng = random.Random(f"{seed}/{variant}")
        self.on = {variant} if variant != "all" else set(VARIANTS)
        self.sessions = 0
        self.fmt: Callable[[str], str] | None = None
        self.pending_retype: list[tuple[str, str, str]] = []  # (path, old, new) to type back
        self._left_from: dict[str, set[str]] = {}
        self.restored = 0  # lines typed back as a commit had them: ambiguous

    # sessions

    def session(self, what: str) -> Session:
        self.sessions += 1
        s = self.sim.session(f"s{self.sessions:02d}", what)
        s.say("I'll look at the code first.")
        return s

    def finish(self, s: Session) -> None:
        ok = self.rng.random() < 0.8
        test = {"py": "python -m pytest -q", "go": "go test ./..."}.get(self.lang, "npm test")
        s.run(test, 0 if ok else 1, "12 passed" if ok else "1 failed, 11 passed")
        if not ok:
            s.run(test, 0, "12 passed")
        s.say("Done: the change is in place and the tests pass.")
        self.sim.advance(5 * MINUTE)

    # edits

    def _unique_block(self, lines: list[str], i1: int, i2: int) -> tuple[int, int]:
        """The smallest [a, b) around [i1, i2) whose text occurs once in the file, at a."""
        text = "".join(lines)
        offsets = [0]
        for ln in lines:
            offsets.append(offsets[-1] + len(ln))
        before, after = 0, 0
        if i1 == i2:
            before = 1 if i1 > 0 else 0
            after = 0 if i1 > 0 else 1
        while True:
            a, b = max(0, i1 - before), min(len(lines), i2 + after)
            block = text[offsets[a] : offsets[b]]
            if block and text.count(block) == 1 and text.find(block) == offsets[a]:
                return a, b
            if a == 0 and b == len(lines):
                return a, b
            if before <= after:
                before += 1
            else:
                after += 1

    def apply_version(self, path: str, new_text: str, owners: Callable[[], str | None]) -> None:
        """Turn the file into ``new_text`` hunk by hunk, from the end; ``owners()`` says
        for each hunk which session writes it (None: the person types it)."""
        cur = self.sim.read(path)
        old_lines = cur.splitlines(keepends=True)
        new_lines = new_text.splitlines(keepends=True)
        ops = [
            op
            for op in difflib.SequenceMatcher(
                None, old_lines, new_lines, autojunk=False
            ).get_opcodes()
            if op[0] != "equal"
        ]
        by_session: dict[str, list[tuple[str, str]]] = {}
        for _tag, i1, i2, j1, j2 in reversed(ops):
            lines = self.sim.read(path).splitlines(keepends=True)
            a, b = self._unique_block(lines, i1, i2)
            old = "".join(lines[a:b])
            new = "".join(lines[a:i1]) + "".join(new_lines[j1:j2]) + "".join(lines[i2:b])
            owner = owners()
            if owner is None or old == "":
                self.sim._set(path, "".join(lines[:a]) + new + "".join(lines[b:]), PERSON, True)
                continue
            s = self._by_label[owner]
            s.replace(path, old, new)
            by_session.setdefault(owner, []).append((old, new))
            if "reverts" in self.on and j2 - j1 >= 3 and self.rng.random() < 0.08:
                self.pending_retype.append((path, old, new))

    # the whole history

    def run(self, releases: list[Release], package: str) -> None:
        sim = self.sim
        layout_change = "renames" in self.on
        half = len(releases) // 2
        first_version, first_files = releases[0]
        files = first_files if layout_change else flat_layout(first_files, package)
        s = self.session(f"Start the {package} package: write its first modules")
        for path in sorted(files):
            if self.rng.random() < 0.5:
                sim.person_write(path, files[path])
            else:
                s.write_file(path, files[path])
        self.finish(s)
        sim.commit(f"{package} {first_version}")
        squash = "squash" in self.on
        for k, (version, raw) in enumerate(releases[1:], start=1):
            sim.advance(3 * HOUR)
            if layout_change:
                self._follow_layout(raw)
            want = raw if layout_change else flat_layout(raw, package)
            if "formatter" in self.on and k == half:
                if self.prettier is not None:
                    done = self.prettier.batch({p: sim.read(p) for p in sim.files})
                    for path in sorted(sim.files):
                        sim.person_rewrite(path, lambda _t, p=path, d=done: d[p])
                    sim.commit("Adopt prettier (print width 72)")
                    self.fmt = lambda t: t  # marks the formatter adopted
                else:
                    self.fmt = gofmt if self.lang == "go" else formatter(72)
                    for path in sorted(sim.files):
                        sim.person_rewrite(path, self.fmt)
                    sim.commit(
                        "Adopt gofmt -s"
                        if self.lang == "go"
                        else "Adopt ruff format (line length 72)"
                    )
            if self.fmt is not None:
                if self.prettier is not None:
                    want = self.prettier.batch(want)
                else:
                    want = {p: self.fmt(t) for p, t in want.items()}
            self._retype()
            self._release(version, want)
            if "tweaks" in self.on:
                self._tweak()
            committed = not squash or k % 3 == 0 or k == len(releases) - 1
            if committed:
                sim.commit(f"Release {version}")
            if "reverts" in self.on and self.pending_retype and committed:
                self._revert()  # a committed hunk, reverted and later typed back
            elif not committed:
                self.pending_retype = []
        if "moves" in self.on:
            self._moves()
        for path in sorted(sim.files):
            sim.expect(path)

    def _follow_layout(self, raw: dict[str, str]) -> None:
        """The real layout change (``pkg/`` -> ``src/pkg/``) by ``git mv``."""
        sim = self.sim
        sim.git("add", "-A")  # files of a release not committed yet (squash) move too
        moved_now = False
        for path in sorted(sim.files):
            moved = f"src/{path}"
            if path not in raw and moved in raw:
                sim.git_mv(path, moved)
                moved_now = True
        moved_layout = any(p.startswith("src/") for p in sim.files)
        if not getattr(self, "_renamed", False) and (moved_layout or self.lang != "py"):
            # a JavaScript or Go package with no real layout change: its module renamed
            candidates = sorted(
                p
                for p in sim.files
                if p.endswith((".py", ".go", *JS_SUFFIXES))
                and "__init__" not in p
                and "index." not in p
            )
            if candidates:
                src = candidates[len(candidates) // 2]
                if moved_now:  # (a package in src/ from its first release moved nothing)
                    sim.commit("Move to the src layout")
                # one module renamed, as the person does it: git mv, the later releases follow
                stem, dot, ext = src.rpartition(".")
                self._rename = (src, f"{stem}_impl{dot}{ext}")
                sim.git_mv(*self._rename)
                sim.commit(f"Rename {src}")
            self._renamed = True

    def _release(self, version: str, want: dict[str, str]) -> None:
        before = {p: [(x.text, x.owner) for x in ls] for p, ls in self.sim.files.items()}
        self._release_edits(version, want)
        self._keep_moved(before)

    def _keep_moved(self, before: dict[str, list[tuple[str, str]]]) -> None:
        """Code that left one file and arrived, typed by the person, in another in the
        same release was moved, not rewritten: it keeps its writer (the issue's rule)."""
        from collections import Counter

        sim = self.sim
        left: dict[str, list[str]] = {}  # text -> owners, by file it left
        left_here: dict[str, Counter[tuple[str, str]]] = {}  # path -> (text, owner) that left
        # blank lines and brackets that left, by owner: they go with a moved block
        small_left: Counter[tuple[str, str]] = Counter()
        for path, old in before.items():
            now = Counter((x.text, x.owner) for x in sim.files.get(path, []))
            for (text, owner), n in (Counter(old) - now).items():
                if owner == PERSON:
                    continue
                if _solid(text):
                    left.setdefault(normalise(text), []).extend([owner] * n)
                    left_here.setdefault(path, Counter())[(normalise(text), owner)] += n
                    self._left_from.setdefault(normalise(text), set()).add(path)
                else:
                    small_left[(normalise(text), owner)] += n
        if not left:
            return
        for path, lines in sim.files.items():
            old_texts = Counter(normalise(t) for t, _ in before.get(path, []))
            moved: dict[int, str] = {}
            for i, x in enumerate(lines):
                norm = normalise(x.text)  # a block may be re-indented where it lands
                owners = left.get(norm)
                if x.owner != PERSON or not owners or old_texts[norm] > 0:
                    continue
                if path in self._left_from.get(norm, set()):
                    continue  # within one file: below
                x.owner = owners.pop()
                moved[i] = x.owner
            # Within one file, text typed (by the person or a session) as another
            # writer's left: a retyping, or a cut and paste (a move keeps its writer,
            # as in the scripted moved_block), or git's diff keeping the old line
            # where difflib's hunks removed and re-added it (a list reordered). git
            # cannot tell them apart: either writer is right.
            here = left_here.get(path)
            if here:
                typed = Counter((normalise(x.text), x.owner) for x in lines) - Counter(
                    (normalise(t), o) for t, o in before.get(path, [])
                )
                for x in lines:
                    norm = normalise(x.text)
                    if typed[(norm, x.owner)] <= 0 or not _solid(x.text):
                        continue
                    mover = next(
                        (o for (t, o), k in here.items() if t == norm and k > 0 and o != x.owner),
                        None,
                    )
                    if mover is None or mover in x.alt:
                        continue
                    here[(norm, mover)] -= 1
                    typed[(norm, x.owner)] -= 1
                    x.alt = (*x.alt, mover)
                    self.restored += 1
            # a person's blank line or bracket between two lines moved from the same
            # writer moved with them (as many as that writer's left their file)
            for i, x in enumerate(lines):
                if x.owner != PERSON or _solid(x.text):
                    continue
                norm = normalise(x.text)
                up = next((j for j in range(i - 1, -1, -1) if _solid(lines[j].text)), None)
                down = next((j for j in range(i + 1, len(lines)) if _solid(lines[j].text)), None)
                if up is None or down is None or up not in moved or down not in moved:
                    continue
                owner = moved[up]
                if moved[down] == owner and small_left[(norm, owner)] > 0:
                    small_left[(norm, owner)] -= 1
                    x.owner = owner
        self._left_from.clear()

    def _release_edits(self, version: str, want: dict[str, str]) -> None:
        sim = self.sim
        rename = getattr(self, "_rename", None)
        if rename is not None:
            want = {(rename[1] if p == rename[0] else p): t for p, t in want.items()}
        changed = sorted(p for p in want if sim.files.get(p) is None or sim.read(p) != want[p])
        gone = sorted(p for p in sim.files if p not in want)
        for path in gone:
            # a file a release not committed yet (squash) added is not in git's index:
            # it goes from the working tree alone
            sim.git("rm", "-q", "-f", "--ignore-unmatch", path)
            (sim.repo / path).unlink(missing_ok=True)
            del sim.files[path]
        if not changed:
            return
        n = min(len(changed), self.rng.choice([1, 2, 2, 3]))
        labels: list[str] = []
        self._by_label: dict[str, Session] = {}
        for i in range(n):
            s = self.session(f"Work towards {version}: part {i + 1}")
            labels.append(s.label)
            self._by_label[s.label] = s
        for path in changed:
            label = self.rng.choice(labels)
            s = self._by_label[label]
            if path not in sim.files:
                if self.rng.random() < 0.75:
                    s.write_file(path, want[path])
                else:
                    sim.person_write(path, want[path])
                continue
            s.view(path)
            typed_share = 0.3

            def owner(label: str = label, typed: float = typed_share) -> str | None:
                return None if self.rng.random() < typed else label

            self.apply_version(path, want[path], owner)
        for label in labels:
            self.finish(self._by_label[label])

    def _tweak(self) -> None:
        """The person edits a few lines sessions wrote in this release before committing."""
        sim = self.sim
        ids = {s.id for s in self._by_label.values()} if hasattr(self, "_by_label") else set()
        c_like = self.lang != "py"
        comment = "  // reviewed" if c_like else "  # reviewed"
        quiet = ("//", "/*", "*", "`") if c_like else ("#", '"')
        for path in sorted(sim.files):
            lines = sim.files[path]
            mine = [
                i
                for i, x in enumerate(lines)
                if x.owner in ids and _solid(x.text) and not x.text.strip().startswith(quiet)
            ]
            for i in self.rng.sample(mine, min(len(mine), max(0, len(mine) // 40))):
                text = sim.read(path).splitlines(keepends=True)
                text[i] = text[i].rstrip("\n") + comment + "\n"
                sim._set(path, "".join(text), PERSON, True)

    def _revert(self) -> None:
        """The person reverts a session's hunk (commit), to type it back next release."""
        sim = self.sim
        kept = []
        for path, old, new in self.pending_retype:
            if path in sim.files and sim.read(path).count(new) == 1:
                sim._set(path, sim.read(path).replace(new, old, 1), PERSON, True)
                kept.append((path, old, new))
        self.pending_retype = kept
        if kept:
            sim.commit("Revert part of the last release")

    def _retype(self) -> None:
        sim = self.sim
        typed = 0
        for path, old, new in self.pending_retype:
            if path in sim.files and sim.read(path).count(old) == 1:
                sim._set(path, sim.read(path).replace(old, new, 1), PERSON, True)
                typed += 1
        for path in sorted({path for path, _, _ in self.pending_retype if path in sim.files}):
            self._restored(path)
        if typed:
            sim.commit("Bring the reverted change back")
        self.pending_retype = []

    def _restored(self, path: str) -> None:
        """Typed back byte for byte as a commit had the file: git cannot tell this from
        ``git checkout OLD -- FILE`` or a revert of the revert, where the lines are
        still their session's. Either answer is right for the lines typed back."""
        sim = self.sim
        now = [x.text for x in sim.files[path]]
        for files in sim.snapshots.values():
            old = files.get(path)
            if old is None or [x.text for x in old] != now:
                continue
            for x, was in zip(sim.files[path], old):
                if x.owner == PERSON and was.owner != PERSON and was.owner not in x.alt:
                    x.alt = (*x.alt, was.owner)
                    self.restored += 1
            return

    def _moves(self) -> None:
        """The person moves top-level functions a session wrote to another file."""
        sim = self.sim
        paths = sorted(p for p in sim.files if len(sim.files[p]) > 40)
        moved = 0
        for path in self.rng.sample(paths, len(paths)):
            if moved >= 4:
                break
            lines = sim.files[path]
            block = _agent_function(lines)
            if block is None:
                continue
            a, b = block
            others = [p for p in paths if p != path]
            if not others:
                break
            dest = self.rng.choice(others)
            taken = lines[a:b]
            sim.files[path] = lines[:a] + lines[b:]
            sim.files[dest] = sim.files[dest] + [Line("", PERSON), Line("", PERSON)] + taken
            for p in (path, dest):
                (sim.repo / p).write_text(sim.read(p), encoding="utf-8")
            moved += 1
        if moved:
            sim.commit("Move helpers to where they are used")


FUNCTION_STARTS = (
    *("def ", "function ", "async function ", "const ", "class ", "func "),
    *("export function ", "export async function ", "export const ", "export class "),
)


def _agent_function(lines: list[Line]) -> tuple[int, int] | None:
    """A top-level function (``def``, ``function``, ``const f = (...) => {``) whose
    lines a session wrote, 4-30 lines long: [a, b), its closing bracket included."""
    for i, x in enumerate(lines):
        if not x.text.startswith(FUNCTION_STARTS) or x.owner == PERSON:
            continue
        braces = x.text.rstrip().endswith("{")
        if x.text.startswith(("const ", "export const ")) and not braces:
            continue
        j = i + 1
        while j < len(lines) and (
            not lines[j].text.strip() or lines[j].text.startswith((" ", "\t"))
        ):
            j += 1
        while j > i + 1 and not lines[j - 1].text.strip():
            j -= 1
        if braces:  # the closing line at the left margin: ``}``, ``})``
            if j >= len(lines) or not lines[j].text.startswith("}"):
                continue
            j += 1
        body = lines[i:j]
        if 4 <= len(body) <= 30 and all(y.owner == x.owner for y in body if y.text.strip()):
            return i, j
    return None


# -- ambiguity -------------------------------------------------------------------------


def mark_ambiguous(sim: Sim) -> int:
    """Adjacent lines of the same text (white space aside) and different writers:
    either writer is right for both. Returns how many lines that made ambiguous."""
    n = 0
    for t in sim.targets:
        lines = t.truth
        for i in range(1, len(lines)):
            a, b = lines[i - 1], lines[i]
            if not a.text.strip() or normalise(a.text) != normalise(b.text) or a.owner == b.owner:
                continue
            a.alt = (*a.alt, b.owner)
            b.alt = (*b.alt, a.owner)
            n += 2
        n += _mark_repeated_blocks(lines)
    return n


REPEAT_SPAN = 2  # a line with this many identical lines either side is in a repeated block


def _mark_repeated_blocks(lines: list[Line]) -> int:
    """Two copies of one block (Go's table tests, a test function pasted and
    renamed) whose corresponding lines have different writers: which copy is the
    old one and which the new is the diff's choice (difflib's for the truth, git's
    for blame), and both are right; either writer is right for such a line.
    Returns how many lines that made ambiguous."""
    norm = [normalise(x.text) for x in lines]
    at: dict[str, list[int]] = {}
    for i, t in enumerate(norm):
        if _solid(lines[i].text):
            at.setdefault(t, []).append(i)
    marked: set[int] = set()
    for spots in at.values():
        if len(spots) < 2 or len(spots) > 12:
            continue
        for k, i in enumerate(spots):
            for j in spots[k + 1 :]:
                lo, hi = -REPEAT_SPAN, REPEAT_SPAN
                if i + lo < 0 or j + hi >= len(lines) or j - i <= 2 * REPEAT_SPAN:
                    continue
                if any(norm[i + d] != norm[j + d] for d in range(lo, hi + 1)):
                    continue
                for d in range(lo, hi + 1):
                    a, b = lines[i + d], lines[j + d]
                    if a.owner == b.owner:
                        continue
                    if b.owner not in a.alt:
                        a.alt = (*a.alt, b.owner)
                        marked.add(i + d)
                    if a.owner not in b.alt:
                        b.alt = (*b.alt, a.owner)
                        marked.add(j + d)
    return len(marked)


def agent_table(scores: list[Score]) -> str:
    """Precision and recall by the agent of the session (every variant summed, and each)."""
    rows = ["| variant | agent | given | wrong | precision | agent lines | missed | recall |"]
    rows.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    total: dict[str, dict[str, int]] = {}
    for s in scores:
        for agent, c in sorted(s.by_agent.items()):
            t = total.setdefault(agent, dict.fromkeys(c, 0))
            for k, n in c.items():
                t[k] += n
    named = [(s.scenario.split("-", 1)[-1], s.by_agent) for s in scores] + [("total", total)]
    for name, by in named:
        for agent, c in sorted(by.items()):
            p = c["correct"] / c["attributed"] if c["attributed"] else 1.0
            r = c["found"] / c["agent_lines"] if c["agent_lines"] else 1.0
            rows.append(
                f"| {name} | {agent} | {c['attributed']:,} | {c['attributed'] - c['correct']} | "
                f"{p:.1%} | {c['agent_lines']:,} | {c['agent_lines'] - c['found']} | {r:.1%} |"
            )
    return "\n".join(rows)


# -- the command line ------------------------------------------------------------------


def _solid(text: str) -> bool:
    return bool(text.strip()) and len(normalise(text)) > 3


def build(
    variant: str,
    releases: list[Release],
    package: str,
    workdir: Path,
    seed: int,
    prettier: Prettier | None = None,
    lang: str | None = None,
) -> tuple[Sim, int]:
    sim = Sim(workdir, f"{package}-{variant}")
    replay = Replay(sim, variant, seed, prettier, lang)
    replay.run(releases, package)
    return sim, mark_ambiguous(sim) + replay.restored


def main(argv: list[str] | None = None) -> int:
    from run import print_scores

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--sdists", type=Path, help="directory of NAME-VERSION.tar.gz (Python)")
    src.add_argument("--npm", type=Path, help="directory of NAME-VERSION.tgz (npm pack)")
    src.add_argument("--git-tags", type=Path, help="a git repository whose tags are releases (Go)")
    ap.add_argument(
        "--lang", choices=("js", "ts", "go"), help="with --npm: js or ts; --git-tags: go"
    )
    ap.add_argument("--tags", help="with --git-tags: the tags to replay, comma-separated, in order")
    ap.add_argument("--prettier", type=Path, help="where `npm install prettier` ran (with --npm)")
    ap.add_argument(
        "--prettier-options", type=json.loads, default=None, help="JSON: the project's own style"
    )
    ap.add_argument("--package", default="packaging")
    ap.add_argument("-k", dest="only", action="append", default=[], help="variants to run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-v", "--verbose", action="store_true", help="list every wrong line")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument(
        "--notes",
        action="store_true",
        help="annotate the history (deja annotate --all) before blaming: blame reads the notes",
    )
    args = ap.parse_args(argv)
    if args.npm is not None:
        if args.prettier is None or not (args.prettier / "node_modules" / "prettier").is_dir():
            print("--npm needs --prettier DIR (run `npm install prettier` in DIR)", file=sys.stderr)
            return 2
        releases = load_npm_releases(args.npm, args.package, args.lang or "js")
        prettier: Prettier | None = Prettier(args.prettier, args.prettier_options)
    elif args.git_tags is not None:
        if args.lang not in (None, "go"):
            print("--git-tags replays Go (--lang go)", file=sys.stderr)
            return 2
        if shutil.which("gofmt") is None:
            print("--git-tags needs gofmt (apt-get install golang-go)", file=sys.stderr)
            return 2
        tags = [t for t in (args.tags or "").split(",") if t] or None
        try:
            releases = load_git_tag_releases(args.git_tags, tags)
        except subprocess.CalledProcessError as e:
            print(f"cannot read the tags of {args.git_tags}: {e.stderr.strip()}", file=sys.stderr)
            return 2
        prettier = None
        args.lang = "go"
    else:
        releases = load_releases(args.sdists, args.package)
        prettier = None
    # a release that changed none of the files replayed (only the build, the docs)
    releases = [r for k, r in enumerate(releases) if k == 0 or r[1] != releases[k - 1][1]]
    if len(releases) < 2:
        print(
            f"need two or more {args.package} releases in "
            f"{args.sdists or args.npm or args.git_tags}",
            file=sys.stderr,
        )
        return 2
    names = [v for v in VARIANTS if not args.only or v in args.only]
    base = Path(tempfile.mkdtemp(prefix="deja-realhist-"))
    scores: list[Score] = []
    extra: dict[str, dict[str, int]] = {}
    try:
        for v in names:
            sim, ambiguous = build(
                v, releases, args.package, base / v, args.seed, prettier, args.lang
            )
            score = sim.run_deja(notes=args.notes)
            scores.append(score)
            extra[v] = {
                "sessions": len(sim.sessions),
                "commits": len(sim.commits),
                "ambiguous": ambiguous,
                "files": len(sim.targets),
            }
            print(
                f"{v}: {len(sim.sessions)} sessions, {len(sim.commits)} commits, "
                f"{score.lines} lines, {required_count([x for t in sim.targets for x in t.truth])}"
                f" agent lines, {ambiguous} ambiguous",
                file=sys.stderr,
            )
    finally:
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    if args.json:
        doc = {
            "package": args.package,
            "releases": [r[0] for r in releases],
            "variants": [
                {**s.to_json(), **extra.get(s.scenario.split("-", 1)[1], {})} for s in scores
            ],
        }
        print(json.dumps(doc, indent=2))
    else:
        print(f"{args.package} {releases[0][0]} .. {releases[-1][0]} ({len(releases)} releases)")
        print_scores(scores, args.verbose)
        if any(len(s.by_agent) > 1 for s in scores):
            print(agent_table(scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
