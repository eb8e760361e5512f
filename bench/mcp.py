"""deja mcp on a real file's history: a warm ``why`` against ``git blame -L`` of the
line, side by side, and the server's start-up against the official SDK's.

Builds (or reuses) the real-code replay of ``bench/blame.py --real``
(``realhistory.py``: a clone of REPO, N Antigravity sessions replaying FILE's
commits) and indexes it. Then one ``deja mcp`` server answers, in turn for each
of ``--lines`` lines spread over the file (agent and person lines):

- ``git blame -L N,N --porcelain FILE`` (a new process, as an agent would run it);
- ``deja why FILE:N --json``, a new process (what an agent runs without the server);
- ``tools/call why {file, line: N}`` on the running server (the index warm: the
  file blamed once before, as by any earlier question about it), timed from the
  request written to the answer read by the client.

Start-up: from spawning the server to the answer of ``tools/list`` after
``initialize``, for ``deja mcp`` and (``--sdk PYTHON``: a Python with the ``mcp``
package installed) a one-tool server on the official SDK, alternated.

    .venv/bin/python bench/mcp.py --real /path/to/click --file src/click/core.py \\
        --sessions 1000 --lines 40 [--sdk /tmp/mcpsdk/bin/python]

The client is the tests' plain protocol client (``tests/mcp_client.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from mcp_client import McpClient  # noqa: E402
from realhistory import build as build_real  # noqa: E402

OUT = HERE / "out" / "mcp"

SDK_SERVER = '''
from mcp.server.mcpserver import MCPServer

app = MCPServer("probe")


@app.tool()
def why(file: str, line: int) -> str:
    """Why a line exists."""
    return f"{file}:{line}"


app.run()
'''


def git_blame_line(repo: Path, file: str, line: int) -> float:
    t = time.perf_counter()
    subprocess.run(
        ["git", "blame", "--porcelain", "-L", f"{line},{line}", file],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t


def cli_why(repo: Path, file: str, line: int, env: dict[str, str]) -> float:
    """What an agent without the server runs: ``deja why FILE:LINE --json``."""
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "deja_blame", "why", f"{file}:{line}", "--json"],
        cwd=repo,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t


def why(
    client: McpClient, file: str, line: int, history: bool = False
) -> tuple[float, dict[str, object]]:
    t = time.perf_counter()
    result = client.call("why", file=file, line=line, history=history)
    took = time.perf_counter() - t
    assert result["isError"] is False, result
    return took, result


def start_up(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Spawn to the answer of tools/list."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}},
    }  # fmt: skip
    for message in (
        hello,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    answers = 0
    while answers < 2:
        line = proc.stdout.readline()
        assert line, "the server ended"
        if "id" in json.loads(line):
            answers += 1
    took = time.perf_counter() - t
    proc.stdin.close()
    proc.wait(timeout=30)
    return took


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--real", type=Path, required=True, help="a git repository with history")
    ap.add_argument("--file", default="src/click/core.py")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--starts", type=int, default=5, help="start-ups timed, each server")
    ap.add_argument("--sdk", type=Path, help="a Python with the official mcp package")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    out = args.out / f"real-{args.sessions}"
    meta = build_real(out, args.real, args.file, args.sessions)
    repo, root, db = out / "repo", out / "root", out / "index.db"
    env = {
        "DEJA_DB": str(db),
        "DEJA_ANTIGRAVITY_ROOT": str(root),
        "PYTHONDONTWRITEBYTECODE": "",  # as installed: bytecode cached
    }
    subprocess.run(
        [sys.executable, "-m", "deja_blame", "index", "-q"],
        env={**os.environ, **env},
        check=True,
        cwd=repo,
    )
    total = int(meta["lines"])  # type: ignore[call-overload]
    client = McpClient(repo, env)
    client.initialize()
    client.call("blame", file=args.file)  # the file asked about once: the index warm
    lines = [1 + i * (total - 1) // max(1, args.lines - 1) for i in range(args.lines)]
    for line in lines[:3]:
        why(client, args.file, line)  # the server's own first-time costs (imports)
    git_s, why_s, ratios, history_s, cli_s = [], [], [], [], []
    kinds: dict[str, int] = {}
    for line in lines:
        g = git_blame_line(repo, args.file, line)
        w, result = why(client, args.file, line)
        runs = result["structuredContent"]["runs"]  # type: ignore[index]
        kinds[runs[0]["kind"]] = kinds.get(runs[0]["kind"], 0) + 1  # type: ignore[index]
        git_s.append(g)
        why_s.append(w)
        ratios.append(w / g)
        history_s.append(why(client, args.file, line, history=True)[0] / g)
    client.close()
    # apart: each deja why writes the index's caches, which a running server then
    # checks its kept answer against
    for line in lines:
        cli_s.append(cli_why(repo, args.file, line, env) / git_blame_line(repo, args.file, line))
    print(f"{args.file}: {total} lines, {meta['commits']} commits, {args.sessions} sessions")
    print(f"lines asked: {len(lines)} ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})")
    print(f"git blame -L N,N --porcelain   median {med(git_s) * 1000:7.1f} ms")
    print(f"deja mcp why (warm)            median {med(why_s) * 1000:7.1f} ms")
    print(
        f"why / git blame -L, pair by pair: median {med(ratios):.2f}x,"
        f" max {max(ratios):.2f}x, over 2x: {sum(r > 2 for r in ratios)} of {len(ratios)}"
    )

    deja_cmd = [sys.executable, "-m", "deja_blame", "mcp"]
    sdk_cmd = None
    if args.sdk:
        server = out / "sdk_server.py"
        server.write_text(SDK_SERVER)
        sdk_cmd = [str(args.sdk), str(server)]
    deja_starts, sdk_starts = [], []
    for _ in range(args.starts):
        deja_starts.append(start_up(deja_cmd, repo, env))
        if sdk_cmd:
            sdk_starts.append(start_up(sdk_cmd, repo, {}))
    print(f"deja why FILE:LINE --json (a process each) / git blame -L: median {med(cli_s):.2f}x")
    print(
        f"why with history=true / git blame -L: median {med(history_s):.2f}x,"
        f" max {max(history_s):.2f}x (the line's versions: git's log of the line)"
    )
    print(f"start-up to tools/list: deja mcp median {med(deja_starts) * 1000:.0f} ms", end="")
    if sdk_starts:
        print(f", the SDK's one-tool server {med(sdk_starts) * 1000:.0f} ms", end="")
    print()


if __name__ == "__main__":
    main()
