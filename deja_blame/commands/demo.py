"""deja demo: the quick start's main job on the bundled fixtures, in a throwaway index."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from deja_blame.commands.index import run_index
from deja_blame.commands.sessions import run_sessions
from deja_blame.commands.show import run_show
from deja_blame.errors import DejaError
from deja_blame.index.db import connect
from deja_blame.index.store import list_sessions


def demo_root() -> Path | None:
    """fixtures/antigravity/demo of a source checkout (also what an editable install sees)."""
    candidates = [
        Path.cwd() / "fixtures" / "antigravity" / "demo",
        Path(__file__).resolve().parents[2] / "fixtures" / "antigravity" / "demo",
    ]
    return next((c for c in candidates if (c / "brain").is_dir()), None)


def run_demo(root: Path | None) -> int:
    root = root or demo_root()
    if root is None:
        raise DejaError(
            "the bundled demo transcripts were not found (fixtures/antigravity/demo)",
            hint="run deja demo from the deja-blame source checkout, or pass --root DIR",
        )
    with tempfile.TemporaryDirectory(prefix="deja-demo-") as tmp:
        db = Path(tmp) / "index.db"
        click.echo(f"$ deja index --root {root}   (throwaway index {db})", err=True)
        run_index(db, [root], rebuild=False, as_json=False)
        conn = connect(db)
        try:
            click.echo("\n$ deja sessions")
            run_sessions(conn, as_json=False)
            rows = list_sessions(conn)
            if rows:
                click.echo(f"\n$ deja show {rows[-1].session_id[:8]}")
                run_show(conn, rows[-1].session_id, as_json=False)
        finally:
            conn.close()
    return 0
