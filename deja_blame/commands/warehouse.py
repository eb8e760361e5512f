"""deja warehouse load | query: rows of many repositories in one DuckDB file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from deja_blame.jsonout import print_json
from deja_blame.output import counted, terminal


def run_load(database: Path, files: list[Path], as_json: bool) -> int:
    from deja_blame.warehouse import load

    result = load(database, files)
    if as_json:
        print_json(result.to_json())
    else:
        click.echo(
            f"deja: loaded {counted(result.rows, 'row')} from {counted(result.files, 'file')}"
            f" into {terminal(str(database))} (replaced {result.replaced:,};"
            f" {counted(result.repositories, 'repository', 'repositories')} in it)",
            err=True,
        )
    return 0


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{100 * value:.1f}%"
    if isinstance(value, int):
        return f"{value:,}"
    return terminal(str(value))


def run_query(database: Path, name: str, show_sql: bool, as_json: bool) -> int:
    from deja_blame.warehouse import QUERIES, query

    if show_sql:
        click.echo(QUERIES[name].strip())
        return 0
    columns, rows = query(database, name)
    if as_json:
        print_json(
            {"query": name, "rows": [dict(zip(columns, (_plain(v) for v in r))) for r in rows]}
        )
        return 0
    table = [columns] + [[_cell(v) for v in r] for r in rows]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(columns))]
    for row in table:
        click.echo("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
    return 0


def _plain(value: Any) -> Any:
    """A JSON value: DuckDB's decimals are numbers, its timestamps ISO text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)
