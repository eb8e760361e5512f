"""deja lsp: the language server, on stdin and stdout, until the editor says exit."""

from __future__ import annotations

from pathlib import Path


def run_lsp(db: Path | None) -> int:
    from deja_blame.editor.lsp import serve

    return serve(db)
