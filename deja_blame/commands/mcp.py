"""deja mcp: the Model Context Protocol server, on stdin and stdout, until stdin closes."""

from __future__ import annotations

from pathlib import Path


def run_mcp(db: Path | None, repo: Path | None, prompts: bool) -> int:
    from deja_blame.editor.mcp import serve

    return serve(db, repo, prompts)
