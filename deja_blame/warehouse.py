"""Many repositories' rows in one DuckDB file (``deja warehouse``), and the questions
people ask of them: the share of agents by agent, model, month and repository.

No engine of our own: DuckDB (``pip install duckdb`` where deja is installed) reads the
rows ``deja export --format rows`` writes (JSON Lines or Parquet) into one table,
``deja_rows``; the queries are plain SQL that BigQuery, ClickHouse and Spark run
as well (docs/warehouse.md shows them, word for word the same as ``QUERIES``).
Loading a repository's rows again replaces its earlier ones (an export is of a
whole history at a tip: two tips' rows would count the same lines twice).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deja_blame.errors import DejaError
from deja_blame.outputs.rows import COLUMNS

TABLE = "deja_rows"
_DUCK_TYPES = {"string": "VARCHAR", "int64": "BIGINT", "timestamp": "TIMESTAMPTZ"}

# name -> SQL over the table deja_rows. Portable SQL (no FILTER, no engine's dialect).
QUERIES: dict[str, str] = {
    "share-by-repository": """
SELECT repository,
       SUM(lines_surviving) AS lines,
       SUM(CASE WHEN session IS NOT NULL THEN lines_surviving ELSE 0 END) AS by_agents,
       ROUND(SUM(CASE WHEN session IS NOT NULL THEN lines_surviving ELSE 0 END)
             / NULLIF(SUM(lines_surviving), 0), 4) AS share
FROM deja_rows
GROUP BY repository
ORDER BY repository
""",
    "share-by-agent": """
SELECT repository, COALESCE(agent, '(people)') AS agent,
       SUM(lines_surviving) AS lines,
       ROUND(SUM(lines_surviving) / NULLIF(SUM(SUM(lines_surviving))
             OVER (PARTITION BY repository), 0), 4) AS share
FROM deja_rows
GROUP BY repository, COALESCE(agent, '(people)')
ORDER BY repository, lines DESC, agent
""",
    "share-by-model": """
SELECT repository, agent, model,
       SUM(lines_surviving) AS lines,
       ROUND(SUM(lines_surviving) / NULLIF(SUM(SUM(lines_surviving))
             OVER (PARTITION BY repository), 0), 4) AS share
FROM deja_rows
WHERE session IS NOT NULL
GROUP BY repository, agent, model
ORDER BY repository, lines DESC, agent, model
""",
    "share-by-month": """
SELECT repository, month,
       COUNT(DISTINCT "commit") AS commits,
       SUM(lines_added) AS lines_added,
       SUM(CASE WHEN session IS NOT NULL THEN lines_added ELSE 0 END) AS by_agents,
       ROUND(SUM(CASE WHEN session IS NOT NULL THEN lines_added ELSE 0 END)
             / NULLIF(SUM(lines_added), 0), 4) AS share
FROM deja_rows
GROUP BY repository, month
ORDER BY repository, month
""",
    "agent-by-month": """
SELECT repository, month, agent, SUM(lines_added) AS lines_added
FROM deja_rows
WHERE session IS NOT NULL
GROUP BY repository, month, agent
ORDER BY repository, month, lines_added DESC, agent
""",
}


@dataclass
class LoadResult:
    database: str
    files: int = 0
    rows: int = 0  # loaded now
    replaced: int = 0  # earlier rows of the same repositories, removed
    repositories: int = 0  # in the table afterwards

    def to_json(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "files": self.files,
            "rows": self.rows,
            "replaced": self.replaced,
            "repositories": self.repositories,
        }


def _duckdb() -> Any:
    try:
        import duckdb  # type: ignore[import-not-found]
    except ImportError as exc:
        raise DejaError(
            "deja warehouse needs DuckDB, which is not installed",
            hint="pip install duckdb where deja is installed (pipx: pipx inject deja duckdb)",
        ) from exc
    return duckdb


def connect(database: Path, create: bool = True) -> Any:
    duckdb = _duckdb()
    if not create and not database.exists():
        raise DejaError(f"no warehouse at {database}", hint=f"deja warehouse load {database} ROWS")
    if database.exists() and not database.is_file():
        raise DejaError(f"{database} is not a file")
    try:
        conn = duckdb.connect(str(database))
    except duckdb.Error as exc:
        raise DejaError(f"cannot open {database} with DuckDB: {_first_line(exc)}") from exc
    columns = ", ".join(f'"{n}" {_DUCK_TYPES[t]}' for n, t in COLUMNS.items())
    conn.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({columns})")
    return conn


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _reader(path: Path) -> str:
    """DuckDB's table function for one rows file, the columns named and typed."""
    if path.suffix == ".parquet":
        return "read_parquet(?)"
    columns = ", ".join(f"'{n}': '{_DUCK_TYPES[t]}'" for n, t in COLUMNS.items())
    return f"read_json(?, format = 'newline_delimited', columns = {{{columns}}})"


def load(database: Path, files: list[Path]) -> LoadResult:
    """Load rows files into ``database`` (created when absent), each repository's rows
    replacing what the table held of that repository."""
    duckdb = _duckdb()
    for f in files:
        if not f.is_file():
            raise DejaError(f"no such file: {f}")
    result = LoadResult(database=str(database), files=len(files))
    conn = connect(database)
    names = ", ".join(f'"{n}"' for n in COLUMNS)
    try:
        conn.execute("BEGIN TRANSACTION")
        conn.execute(f"CREATE TEMP TABLE incoming AS SELECT {names} FROM {TABLE} LIMIT 0")
        for f in files:
            conn.execute(f"INSERT INTO incoming SELECT {names} FROM {_reader(f)}", [str(f)])
        result.rows = conn.execute("SELECT COUNT(*) FROM incoming").fetchone()[0]
        bad = conn.execute(
            "SELECT COUNT(*) FROM incoming WHERE schema IS DISTINCT FROM 'deja.rows/1'"
            ' OR repository IS NULL OR "commit" IS NULL'
        ).fetchone()[0]
        if bad:
            raise DejaError(
                f"{bad} row(s) are not deja rows (schema deja.rows/1 with a repository and"
                " a commit): nothing loaded",
                hint="write them with: deja export --format rows",
            )
        result.replaced = conn.execute(
            f"DELETE FROM {TABLE} AS t WHERE EXISTS (SELECT 1 FROM incoming AS i"
            " WHERE i.repository = t.repository"
            " AND i.repository_root IS NOT DISTINCT FROM t.repository_root)"
        ).fetchone()[0]
        conn.execute(f"INSERT INTO {TABLE} SELECT {names} FROM incoming")
        conn.execute("DROP TABLE incoming")
        conn.execute("COMMIT")
        result.repositories = conn.execute(
            f"SELECT COUNT(DISTINCT repository) FROM {TABLE}"
        ).fetchone()[0]
    except duckdb.Error as exc:
        conn.execute("ROLLBACK")
        raise DejaError(f"could not load the rows: {_first_line(exc)}; nothing loaded") from exc
    except DejaError:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return result


def query(database: Path, name: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """One of ``QUERIES`` over ``database``: (column names, rows)."""
    if name not in QUERIES:
        raise DejaError(f"unknown query {name!r} (one of {', '.join(QUERIES)})")
    conn = connect(database, create=False)
    try:
        cur = conn.execute(QUERIES[name])
        columns = [d[0] for d in cur.description]
        return columns, cur.fetchall()
    finally:
        conn.close()
