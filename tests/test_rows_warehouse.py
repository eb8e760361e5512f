"""deja export --format rows, and the rows of three repositories in a real DuckDB.

The documented queries (docs/warehouse.md, the same SQL as ``deja warehouse
query``) return, for each repository, the same totals as ``deja stats`` (lines
at the tip by agent and model, the share) and ``deja stats --by month`` (lines
added per month, by agents and by each agent). Two repositories keep their
attribution in notes (Antigravity sessions over two months, lines deleted
later), one only in its index (Antigravity and Claude Code sessions).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from conftest import REPO_ROOT, built_once, git, seal
from newcomer_world import build_world
from test_notes_world import S1, S2, S3, World, body

from deja_blame.outputs.rows import COLUMNS, repository_name
from deja_blame.warehouse import QUERIES

DOCS = REPO_ROOT / "docs" / "warehouse.md"
DAY = 86_400


def _notes_repo(tmp: Path, name: str, plan: list[tuple[str | None, str, str, int]]) -> dict:
    """A repository whose commits are written by sessions (or people: None) and noted."""
    repo = tmp / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "commit.gpgsign", "false")
    w = World(tmp, repo, name=f"{name}-agy")
    w.person("README.md", f"# {name}\n")
    w.commit("init")
    for who, rel, content, days_later in plan:
        w.clock += days_later * DAY
        if who is None:
            w.person(rel, content)
        else:
            w.write(who, rel, content)
        w.commit(f"{rel} by {who or 'a person'}")
    w.index()
    w.deja("annotate", f"{git(repo, 'rev-list', '--max-parents=0', 'HEAD').strip()}..HEAD")
    return {"repo": str(repo), "env": w.env}


def build(where: Path) -> list[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as mp:
        seal(mp, where / "home", where)
        alpha = _notes_repo(
            where,
            "alpha",
            [
                (S1, "app.py", body("a", 8), 0),
                (None, "people.py", body("p", 5), 1),
                (S2, "app.py", body("a", 4) + body("b", 6), 40),  # the next month; 4 of S1's go
                (S2, "lib.py", body("l", 3), 1),
            ],
        )
        beta = _notes_repo(
            where,
            "beta",
            [(S3, "main.py", body("m", 7), 0), (None, "main.py", body("m", 5), 35)],
        )
        shop = build_world(where / "shop-world")
        env = {
            **shop.env,  # its HOME, where each agent keeps its transcripts
            "DEJA_DB": str(shop.home / "index.db"),
            "DEJA_ANTIGRAVITY_ROOT": str(shop.home / ".gemini" / "antigravity"),
        }
        subprocess.run(
            [sys.executable, "-m", "deja_blame", "index", "-q"], cwd=shop.repo, env=env, check=True
        )
        third = {"repo": str(shop.repo), "env": env}
        return [alpha, beta, third]


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return built_once(tmp_path_factory, "rows-warehouse", build)


def run(r: dict[str, Any], *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", *args],
        cwd=r["repo"],
        env={**os.environ, **r["env"]},
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0 or not check, proc.stderr.decode()
    return proc


def documented_queries() -> dict[str, str]:
    """The SQL blocks of docs/warehouse.md, each under its ``-- name`` first line."""
    out = {}
    for block in re.findall(r"```sql\n(.*?)```", DOCS.read_text(), re.S):
        first, _, rest = block.partition("\n")
        if first.startswith("-- ") and first[3:].strip() in QUERIES:
            out[first[3:].strip()] = rest
    return out


def test_the_docs_show_the_queries_deja_runs() -> None:
    docs = documented_queries()
    assert set(docs) == set(QUERIES)
    for name, sql in QUERIES.items():
        assert docs[name].strip() == sql.strip(), name


def test_rows_load_into_duckdb_and_agree_with_deja_stats(
    repos: list[dict[str, Any]], tmp_path: Path
) -> None:
    files = []
    for i, r in enumerate(repos):
        out = tmp_path / f"rows{i}.jsonl"
        run(r, "export", "--format", "rows", "-o", str(out))
        assert out.stat().st_mode & 0o777 == 0o600
        rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
        assert rows and all(list(row) == list(COLUMNS) for row in rows)  # stable columns
        files.append(out)
    db = tmp_path / "org.duckdb"
    loaded = orjson.loads(
        run(repos[0], "warehouse", "load", str(db), *map(str, files), "--json").stdout
    )
    assert loaded["repositories"] == 3 and loaded["replaced"] == 0
    again = orjson.loads(
        run(repos[0], "warehouse", "load", str(db), str(files[0]), "--json").stdout
    )
    assert again["replaced"] == again["rows"] > 0  # a repository's rows replace its old ones
    # counts said in the singular where there is one (newcomer 7: "1 file(s)", "1 repositories")
    said = run(repos[0], "warehouse", "load", str(tmp_path / "one.duckdb"), str(files[0]))
    text = said.stderr.decode()
    assert " from 1 file into " in text and "; 1 repository in it)" in text, text

    con = duckdb.connect(str(db), read_only=True)

    def q(name: str, repository: str) -> list[dict[str, Any]]:
        cur = con.execute(documented_queries()[name])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall() if r[0] == repository]

    names = [n for (n,) in con.execute("SELECT DISTINCT repository FROM deja_rows").fetchall()]
    assert len(names) == 3
    for r, f in zip(repos, files):
        repository = orjson.loads(f.read_bytes().splitlines()[0])["repository"]
        stats = orjson.loads(run(r, "stats", "--rev", "HEAD", "--json").stdout)
        (total,) = q("share-by-repository", repository)
        assert (total["lines"], total["by_agents"]) == (stats["lines"], stats["attributed_lines"])
        assert float(total["share"]) == pytest.approx(stats["share"], abs=1e-4)
        agents = {x["agent"]: x["lines"] for x in q("share-by-agent", repository)}
        people = agents.pop("(people)", 0)
        assert agents == {a["agent"]: a["lines"] for a in stats["by_agent"]}
        assert people == stats["lines"] - stats["attributed_lines"]
        models = {x["model"] or "(unknown)": x["lines"] for x in q("share-by-model", repository)}
        assert models == {m["model"]: m["lines"] for m in stats["by_model"]}

        history = orjson.loads(run(r, "stats", "--by", "month", "--json").stdout)["periods"]
        months = q("share-by-month", repository)
        assert [(m["month"], m["commits"], m["lines_added"], m["by_agents"]) for m in months] == [
            (p["period"], p["commits"], p["lines_added"], p["by_agents"]) for p in history
        ]
        by_agent = {
            (m["month"], m["agent"]): m["lines_added"] for m in q("agent-by-month", repository)
        }
        assert by_agent == {
            (p["period"], a["agent"]): a["lines"] for p in history for a in p["by_agent"]
        }
    # the repositories differ: two months in alpha, S1's deleted lines did not survive
    alpha = [orjson.loads(x) for x in files[0].read_bytes().splitlines()]
    first = next(x for x in alpha if x["session"] == S1)
    assert (first["lines_added"], first["lines_surviving"]) == (8, 4)
    assert len({x["month"] for x in alpha}) == 2
    shop = {x["agent"] for x in map(orjson.loads, files[2].read_bytes().splitlines())}
    assert {"antigravity", "claude-code"} <= shop


def test_parquet_has_the_same_rows(repos: list[dict[str, Any]], tmp_path: Path) -> None:
    jsonl, parquet = tmp_path / "rows.jsonl", tmp_path / "rows.parquet"
    run(repos[1], "export", "--format", "rows", "-o", str(jsonl))
    run(repos[1], "export", "--format", "rows", "-o", str(parquet))
    assert parquet.read_bytes()[:4] == b"PAR1" and parquet.stat().st_mode & 0o777 == 0o600
    con = duckdb.connect()
    a = con.execute(
        'SELECT "commit", path, session, lines_added, lines_surviving, epoch(commit_time)'
        " FROM read_parquet(?) ORDER BY ALL",
        [str(parquet)],
    ).fetchall()
    b = con.execute(
        'SELECT "commit", path, CAST(session AS VARCHAR), lines_added, lines_surviving,'
        " epoch(CAST(commit_time AS TIMESTAMPTZ)) FROM read_json(?) ORDER BY ALL",
        [str(jsonl)],
    ).fetchall()
    assert a == b and a
    db = tmp_path / "p.duckdb"
    run(repos[1], "warehouse", "load", str(db), str(parquet))
    out = run(repos[1], "warehouse", "query", str(db), "share-by-repository").stdout.decode()
    assert "beta" in out


def test_bad_input_is_one_line(repos: list[dict[str, Any]], tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"hello": 1}\n')
    db = tmp_path / "x.duckdb"
    proc = run(repos[0], "warehouse", "load", str(db), str(junk), check=False)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert proc.stderr.decode().startswith("deja: error: 1 row(s) are not deja rows")
    proc = run(
        repos[0], "warehouse", "query", str(tmp_path / "none.duckdb"), "share-by-agent", check=False
    )
    assert proc.returncode == 1 and b"no warehouse at" in proc.stderr


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://user:token@github.com/team/app.git", "github.com/team/app"),
        ("git@gitlab.example.com:group/sub/app.git", "gitlab.example.com/group/sub/app"),
        ("ssh://git@host:2222/x/y.git", "host:2222/x/y"),
        ("/srv/git/app.git", "app"),
        ("file:///srv/git/app.git", "app"),
        (None, "fallback"),
    ],
)
def test_repository_names_carry_no_credentials(url: str | None, name: str) -> None:
    assert repository_name(url, "fallback") == name
