"""deja demo: the quick start's main job on the bundled fixtures, in a throwaway index.

It indexes the demo transcripts, lists and shows the sessions, then rebuilds the
shop repository the first session worked on (as another clone of it: the
transcript says /home/dev/shop, the demo repository lives in a temp directory),
commits the person's version and then the agent's, and blames it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import click

from deja_blame.errors import DejaError
from deja_blame.index.db import connect
from deja_blame.index.store import list_sessions
from deja_blame.session_ids import short


def demo_root() -> Path | None:
    """fixtures/antigravity/demo of a source checkout (also what an editable install sees)."""
    candidates = [
        Path.cwd() / "fixtures" / "antigravity" / "demo",
        Path(__file__).resolve().parents[2] / "fixtures" / "antigravity" / "demo",
    ]
    return next((c for c in candidates if (c / "brain").is_dir()), None)


@dataclass(frozen=True)
class DemoSteps:
    """The commands the demo runs, as the command line hands them over (a command
    module imports no other command)."""

    index: Callable[..., int]
    sessions: Callable[..., int]
    show: Callable[..., int]
    why: Callable[..., int]


def run_demo(root: Path | None, steps: DemoSteps) -> int:
    root = root or demo_root()
    if root is None:
        raise DejaError(
            "the bundled demo transcripts were not found (fixtures/antigravity/demo)",
            hint="run deja demo from the deja-blame source checkout, or pass --root DIR",
        )
    with tempfile.TemporaryDirectory(prefix="deja-demo-") as tmp:
        db = Path(tmp) / "index.db"
        click.echo(f"$ deja index --root {root}   (throwaway index {db})", err=True)
        with _trusting(root):
            steps.index(db, [root], rebuild=False, as_json=False)
        conn = connect(db)
        try:
            click.echo("\n$ deja sessions")
            # the person's own transcripts wait for their own index, not this one
            steps.sessions(conn, as_json=False, waiting_hint=False)
            rows = list_sessions(conn)
            if rows:
                click.echo(f"\n$ deja show {short(rows[-1].session_id)}")
                steps.show(conn, rows[-1].session_id, as_json=False)
            if any(r.project == "/home/dev/shop" for r in rows):
                _blame_demo(conn, Path(tmp) / "shop", steps.why)
        finally:
            conn.close()
    click.echo(
        "\nnext: deja index reads your own agents' transcripts into your index (this"
        " demo's was thrown away); then deja blame FILE in a repository they worked on",
        err=True,
    )
    return 0


@contextmanager
def _trusting(root: Path) -> Iterator[None]:
    """The demo's transcripts are tracked by the checkout that ships them, which the
    provenance gate leaves out (a repository's sessions are a stranger's until the
    user says so). Running ``deja demo`` is saying so, for this root and this run
    only: as ``DEJA_TRUSTED`` would, not written to ``deja trust``'s file."""
    from deja_blame.index.provenance import TRUSTED_ENV

    before = os.environ.get(TRUSTED_ENV)
    os.environ[TRUSTED_ENV] = os.pathsep.join([str(root), *([before] if before else [])])
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TRUSTED_ENV, None)
        else:
            os.environ[TRUSTED_ENV] = before


CART_BEFORE = """from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 1


def total(items):
    \"\"\"Sum the price of every line in the cart.\"\"\"
    return sum(item.price for item in items)
"""

QUANTITY_TEST = """from src.cart import Item, total


def test_quantity_multiplies_price():
    assert total([Item("mug", 4.5, 2)]) == 9.0


def test_mixed_cart_is_rounded_to_cents():
    items = [Item("pen", 0.1, 3), Item("pad", 1.25, 1)]
    assert total(items) == 1.55
"""


def _blame_demo(conn: sqlite3.Connection, repo: Path, run_why: Callable[..., int]) -> None:
    """The shop as the person had it, then as the agent left it: blame tells them apart."""
    from deja_blame.attribution.blame import blame_file
    from deja_blame.gitutil import open_repository
    from deja_blame.notes.store import read_tips
    from deja_blame.outputs.blame_text import print_human

    (repo / "src").mkdir(parents=True)
    (repo / "tests").mkdir()
    cart = repo / "src" / "cart.py"
    cart.write_text(CART_BEFORE)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Dev Person",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev Person",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }

    def git(*args: str, when: str | None = None) -> None:
        extra = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
        subprocess.run(
            ["git", "-C", str(repo), *args], env={**env, **extra}, check=True, capture_output=True
        )

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "Cart module", when="2026-07-16T16:00:00Z")
    cart.write_text(
        CART_BEFORE.replace(
            "    return sum(item.price for item in items)",
            "    return round(sum(item.price * item.quantity for item in items), 2)",
        )
    )
    (repo / "tests" / "test_cart_quantity.py").write_text(QUANTITY_TEST)
    git("add", "-A")
    git("commit", "-q", "-m", "Fix cart totals for quantities", when="2026-07-17T09:30:00Z")
    opened = open_repository(repo)
    for rel in ("src/cart.py", "tests/test_cart_quantity.py"):
        click.echo(f"\n$ deja blame {rel}      (in a rebuilt clone of the shop at {repo})")
        print_human(blame_file(opened, rel, None, conn, tips=read_tips(opened)))
    click.echo("\n$ deja why src/cart.py:13")
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        run_why(conn, "src/cart.py:13", None, as_json=False, refresh=False)
    finally:
        os.chdir(cwd)
