"""deja hooks install | uninstall | status (and run: what the hook scripts call)."""

from __future__ import annotations

from pathlib import Path

import click

from deja_blame.gitutil import open_repository
from deja_blame.hooks import install as hooks_install
from deja_blame.jsonout import print_json


def run_install(as_json: bool, cwd: Path | None = None) -> int:
    repo = open_repository(cwd or Path.cwd())
    report = hooks_install.install(repo)
    if as_json:
        print_json(report.to_json())
    else:
        for action in report.actions:
            click.echo(f"deja: {action}", err=True)
        click.echo(
            f"deja: hooks installed in {report.hooks_dir}: each commit gets its note"
            " (refs/notes/deja) in the background",
            err=True,
        )
    return 0


def run_uninstall(as_json: bool, cwd: Path | None = None) -> int:
    repo = open_repository(cwd or Path.cwd())
    report = hooks_install.uninstall(repo)
    if as_json:
        print_json(report.to_json())
    else:
        for action in report.actions:
            click.echo(f"deja: {action}", err=True)
        if not report.actions:
            click.echo("deja: no deja hooks were installed here", err=True)
    return 0


def run_status(as_json: bool, cwd: Path | None = None) -> int:
    repo = open_repository(cwd or Path.cwd())
    doc = hooks_install.status(repo)
    if as_json:
        print_json(doc)
        return 0
    click.echo(f"hooks directory: {doc['hooks_dir']}")
    for hook, info in doc["hooks"].items():
        line = f"{hook:<13} {info['state']}"
        if info["chained"]:
            line += f"; runs {Path(info['chained']).name} first ({info['chained_kind']})"
        if info["python"] and not info["python_ok"]:
            line += f"; its python {info['python']} is gone: run deja hooks install again"
        click.echo(line)
    cfg = doc["config"]
    ref_ok = "yes" if "refs/notes/deja" in cfg["notes.rewriteRef"] else "no"
    click.echo(f"notes follow amend/rebase (notes.rewriteRef): {ref_ok}")
    source = "deja.hook.timeout" if cfg["deja.hook.timeout"] else "default"
    click.echo(
        f"background: {cfg['deja.hook.background']},"
        f" time budget: {doc['budget_seconds']:g} s ({source})"
    )
    if doc["last_warning"]:
        click.echo(f"last warning: {doc['last_warning']}")
    if doc["late_notes"]:
        from deja_blame.hooks.late import summary

        click.echo(f"late notes: {summary(len(doc['late_notes']))}")
    if doc["history_pass"]:
        click.echo(
            "history's notes: a pass over the whole history done (deja doctor says if it is current)"
        )
    elif doc["installed"]:
        click.echo(
            "history's notes: not all written yet (the commits made before the hooks:"
            " each commit's hook writes some in the background; all now: deja annotate --all)"
        )
    else:
        click.echo("history's notes: none written (deja annotate --all writes them)")
    return 0


def run_hook(hook: str, args: tuple[str, ...]) -> int:
    from deja_blame.hooks.run import main

    return main([hook, *args])
