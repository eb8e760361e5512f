"""The resident server runs a command exactly as the console script would: the same
output, errors, exit code, stdin, folder and environment; Ctrl-C reaches it; it is
never used where it should not be (a terminal, another installation, changed code,
a folder others can open, DEJA_SERVER=0); it goes away when idle or stopped."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from conftest import commit_env, deja, git

import deja_blame
from deja_blame.resident import client, place, server

pytestmark = pytest.mark.skipif(os.name != "posix", reason="Unix sockets and fork")


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short private folder for the socket (a test's tmp_path is too long for one)."""
    folder = Path(tempfile.mkdtemp(prefix="dj-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def running(runtime: Path) -> Iterator[Path]:
    deja("server", "start", "--idle", "2")
    try:
        yield runtime
    finally:
        deja("server", "stop")


@pytest.fixture
def history(repo: Path) -> Path:
    (repo / "a.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 21)))
    git(repo, "add", "a.py")
    git(repo, "commit", "-q", "-m", "one", env=commit_env(1_784_278_800))
    (repo / "sub").mkdir()
    (repo / "sub" / "b.py").write_text("b = 1\n")
    git(repo, "add", "sub/b.py")
    git(repo, "commit", "-q", "-m", "two", env=commit_env(1_784_278_900))
    return repo


def _served() -> int:
    doc = orjson.loads(deja("server", "status", "--json").stdout)
    assert doc["running"] is True
    return int(doc["served"])


def _both(
    *args: str, cwd: Path, input: bytes | None = None, env: dict[str, str] | None = None
) -> tuple[object, object]:
    """The same command through the server and in its own process."""
    before = _served()
    by_server = deja(*args, cwd=cwd, input=input, check=False, env=env)
    assert _served() == before + 1, "the server did not run the command"
    here = deja(*args, cwd=cwd, input=input, check=False, env={**(env or {}), "DEJA_SERVER": "0"})
    assert _served() == before + 1, "DEJA_SERVER=0 still used the server"
    return (
        (by_server.returncode, by_server.stdout, by_server.stderr),
        (here.returncode, here.stdout, here.stderr),
    )


def test_a_command_through_the_server_is_the_command_itself(running: Path, history: Path) -> None:
    served, here = _both("blame", "a.py", "--json", cwd=history)
    assert served == here
    assert orjson.loads(served[1])["lines"][0]["text"] == "line_1 = 1"  # type: ignore[index]
    served, here = _both("blame", "b.py", cwd=history / "sub")  # the client's folder
    assert served == here and served[0] == 0  # type: ignore[index]


def test_status_counts_the_forks_cpu_to_the_microsecond(running: Path, history: Path) -> None:
    """Benchmarks read a command's fork's CPU from ``children_cpu``: in clock ticks (10 ms,
    ``os.times``) a warm answer read as 0 or 10 ms."""

    def spent() -> float:
        return float(orjson.loads(deja("server", "status", "--json").stdout)["children_cpu"])

    before = spent()
    for _ in range(3):
        deja("blame", "a.py", "--json", cwd=history)
    deadline = time.monotonic() + 10
    while (after := spent()) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    ticks = (after - before) * 100
    assert after > before and abs(ticks - round(ticks)) > 1e-6, (before, after)


def test_errors_and_exit_codes_are_the_command_s(running: Path, history: Path) -> None:
    served, here = _both("blame", "missing.py", cwd=history)
    assert served == here
    assert served[0] == 1 and b"no such file" in served[2]  # type: ignore[index]
    served, here = _both("blame", "a.py", "--no-such-option", cwd=history)
    assert served == here and served[0] == 2  # type: ignore[index]
    # git blame --contents of a path HEAD lacks: git's error, git's exit code
    served, here = _both("blame", "--contents", "-", "nosuch.py", cwd=history, input=b"x = 1\n")
    assert served == here and served[0] == 128  # type: ignore[index]
    assert served[2] == b"deja: error: no such path 'nosuch.py' in HEAD\n"  # type: ignore[index]


def test_stdin_is_the_client_s(running: Path, history: Path) -> None:
    text = (history / "a.py").read_bytes().replace(b"line_3 = 3", b"line_3 = 33")
    served, here = _both("blame", "--contents", "-", "a.py", "--json", cwd=history, input=text)
    assert served == here
    doc = orjson.loads(served[1])  # type: ignore[index]
    assert doc["lines"][2]["text"] == "line_3 = 33" and doc["lines"][2]["commit"] is None


def test_the_environment_is_the_client_s(running: Path, history: Path, tmp_path: Path) -> None:
    db = tmp_path / "elsewhere" / "index.db"
    before = _served()
    deja("index", env={"DEJA_DB": str(db)}, cwd=history)
    assert _served() == before + 1
    assert db.exists() and oct(db.stat().st_mode & 0o777) == oct(0o600)


def _waiting_on_stdin(history: Path) -> subprocess.Popen[bytes]:
    """``deja blame --contents - a.py`` handed to the server, whose fork waits on the
    stdin this keeps open."""
    before = _served()
    proc = subprocess.Popen(
        [sys.executable, "-m", "deja_blame", "blame", "--contents", "-", "a.py"],
        cwd=history,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while _served() == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _served() == before + 1
    time.sleep(0.3)
    return proc


def test_ctrl_c_reaches_the_command(running: Path, history: Path) -> None:
    proc = _waiting_on_stdin(history)
    try:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert b"interrupted" in err


def test_a_terminal_is_never_handed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "isatty", lambda fd: True)
    assert not client.wanted(["blame", "a.py"])
    monkeypatch.setattr(os, "isatty", lambda fd: False)
    assert client.wanted(["blame", "a.py"])
    assert not client.wanted(["server", "status"]) and not client.wanted(["lsp"])
    monkeypatch.setenv("DEJA_SERVER", "0")
    assert not client.wanted(["blame", "a.py"])


def test_global_options_before_the_command_are_the_command_s(
    running: Path, history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``deja --db X -C DIR blame`` goes to the server too (the README teaches global
    options first), and answers as it does run here."""
    monkeypatch.setattr(os, "isatty", lambda fd: False)
    assert client.command_of(["--db", "x.db", "-C", "d", "--no-pager", "blame"]) == "blame"
    assert client.command_of(["--color=never", "-Cd", "why", "a.py:1"]) == "why"
    assert client.command_of(["--db", "x.db", "lsp"]) == "lsp"
    assert not client.wanted(["--db", "x.db", "lsp"]) and not client.wanted(["--version"])
    assert client.command_of(["--help"]) is None and client.command_of(["--db"]) is None
    # the caller's own descriptors, however an option spells them, stay the caller's
    for own in (["-C/dev/fd/7", "blame", "f"], ["--db=/proc/self/fd/7", "blame", "f"],
                ["-C", "/proc/thread-self/fd/3", "why", "f:1"]):  # fmt: skip
        assert not client.wanted(own), own
    db = str(tmp_path / "other.db")
    by_server, here = _both(
        "--db", db, "-C", str(history / "sub"), "blame", "b.py", "--json", cwd=tmp_path
    )
    assert by_server == here and by_server[0] == 0


def test_another_installation_is_refused(
    running: Path, history: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(history)
    monkeypatch.setattr(deja_blame, "__version__", "0.0.0+another")
    before = _served()
    # what Ctrl-C did before: Python's handler, or ignored where the suite was started
    # in the background (nohup, a non-interactive shell's &)
    own = signal.getsignal(signal.SIGINT)
    assert client.run(["blame", "a.py", "--json"]) is None  # run here instead
    assert _served() == before
    # and run here, Ctrl-C is this process's own again (not passed to a fork that never was)
    assert signal.getsignal(signal.SIGINT) is own


def test_changed_code_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "pkg"
    shutil.copytree(place.package_dir(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(place, "package_dir", lambda: str(copy))
    stamp = server.code_stamp()
    assert server.code_stamp() == stamp
    target = copy / "attribution" / "match" / "lines.py"
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
    assert server.code_stamp() != stamp


def test_only_a_private_folder_of_the_user_s_holds_the_socket(tmp_path: Path) -> None:
    open_folder = tmp_path / "open"
    open_folder.mkdir(mode=0o755)
    open_folder.chmod(0o755)
    assert not place.private_dir(str(open_folder))
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert place.private_dir(str(private))
    link = tmp_path / "link"
    link.symlink_to(private)
    assert not place.private_dir(str(link))
    made = tmp_path / "made"
    assert place.private_dir(str(made), create=True)
    assert oct(made.stat().st_mode & 0o777) == oct(0o700)


def test_a_folder_another_start_made_at_the_same_moment_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two `deja server start` at once: the other made the folder between this one's
    # lstat and its mkdir (this one then said the socket's path was too long)
    raced = tmp_path / "raced"
    real_mkdir = os.mkdir

    def the_other_was_first(path: str, mode: int = 0o777) -> None:
        real_mkdir(path, 0o700)
        raise FileExistsError(path)

    monkeypatch.setattr(os, "mkdir", the_other_was_first)
    assert place.private_dir(str(raced), create=True)

    def an_open_one_was_first(path: str, mode: int = 0o777) -> None:
        real_mkdir(path, 0o755)
        os.chmod(path, 0o755)
        raise FileExistsError(path)

    # one open to others (or another user's) is still refused
    monkeypatch.setattr(os, "mkdir", an_open_one_was_first)
    assert not place.private_dir(str(tmp_path / "open-raced"), create=True)


def test_an_idle_server_goes_away(runtime: Path) -> None:
    path = place.socket_path(create=True)
    assert path is not None
    proc = subprocess.Popen(
        [sys.executable, "-m", "deja_blame.resident.server", "--socket", path, "--idle", "1"]
    )
    try:
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert not os.path.exists(path)
    assert client.request(client.STATUS) is None


def test_stop_and_status_say_what_is_there(runtime: Path) -> None:
    assert deja("server", "status", check=False).returncode == 1
    first = orjson.loads(deja("server", "start", "--json").stdout)
    again = orjson.loads(deja("server", "start", "--json").stdout)
    assert first["status"] == "started" and again["status"] == "already running"
    assert first["pid"] == again["pid"]
    assert oct(os.stat(first["socket"]).st_mode & 0o777) == oct(0o600)
    assert deja("server", "stop").stdout == b"deja: server stopped\n"
    deadline = time.monotonic() + 20
    while os.path.exists(first["socket"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(first["socket"])
    assert deja("server", "stop").stdout == b"deja: no server was running\n"


def _cached_answers_soon(db: Path) -> int:
    """The attribution cache's entries, once the fork's deferred write has made one
    (within 20 s; 0 if it never does)."""
    import sqlite3

    deadline = time.monotonic() + 20
    count = 0
    while time.monotonic() < deadline:
        with sqlite3.connect(db) as conn:
            count = conn.execute("SELECT COUNT(*) FROM attribution_cache").fetchone()[0]
        if count:
            break
        time.sleep(0.05)
    return int(count)


def test_what_the_answer_learnt_is_kept_after_it_is_out(running: Path, history: Path) -> None:
    """The fork hands the answer back, then writes the cache (``later.py``): the next
    answer is the cache's."""
    first = deja("blame", "a.py", "--json", cwd=history).stdout
    assert _cached_answers_soon(Path(os.environ["DEJA_DB"])) == 1
    assert deja("blame", "a.py", "--json", cwd=history).stdout == first


def test_the_caller_s_time_zone(running: Path, history: Path) -> None:
    served, here = _both("blame", "a.py", "--date", "local", cwd=history, env={"TZ": "Asia/Tokyo"})
    assert served == here
    assert b"2026-07-17" in served[1] or b"Jul 17" in served[1]  # type: ignore[index]


def test_a_caller_that_gave_up_never_has_its_command_run(
    running: Path, history: Path, tmp_path: Path
) -> None:
    """The fork waits for the caller's go: a caller that stopped waiting (and ran the
    command itself) closes the connection, and nothing runs twice."""
    import socket
    import struct

    def ask(db: Path, go: bool) -> None:
        path = place.socket_path()
        assert path is not None
        fields = [
            deja_blame.__version__, place.package_dir(), str(history), "18",
            "utf-8:strict", "utf-8:strict", "utf-8:strict", "1", "index",
            *(f"{k}={v}" for k, v in {**os.environ, "DEJA_DB": str(db)}.items()),
        ]  # fmt: skip
        payload = b"\0".join(os.fsencode(f) for f in fields)
        null = os.open(os.devnull, os.O_RDWR)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(path)
            data = client.MAGIC + client.RUN + struct.pack(">I", len(payload)) + payload
            socket.send_fds(sock, [data], [null, null, null])
            assert client._read(sock, 5)[:1] == client.STARTED
            if go:
                sock.sendall(client.GO)
                assert client._read(sock, 5)[:1] == client.EXITED
        os.close(null)

    ask(tmp_path / "gave-up.db", go=False)
    ask(tmp_path / "went-on.db", go=True)
    time.sleep(1)
    assert (tmp_path / "went-on.db").exists()
    assert not (tmp_path / "gave-up.db").exists()


def test_a_caller_killed_outright_ends_its_command(running: Path, history: Path) -> None:
    """SIGKILL cannot be passed on: the fork sees its caller go and stops, letting go of
    the caller's pipes."""
    import select

    proc = _waiting_on_stdin(history)
    try:
        proc.kill()
        proc.wait(timeout=10)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready and proc.stdout.read() == b"", "the fork still holds the caller's stdout"
    finally:
        proc.kill()
        if proc.stdin:
            proc.stdin.close()


def test_the_caller_s_own_descriptors_and_a_removed_folder_run_here(tmp_path: Path) -> None:
    assert not client.wanted(["blame", "--contents", "/dev/fd/63", "a.py"])
    assert not client.wanted(["blame", "--contents=/dev/fd/63", "a.py"])
    assert not client.wanted(["handoff", "--to", "agy"])
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.run(
        ["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && "{sys.executable}" -m deja_blame sessions'],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(Path(place.package_dir()).parent)},
    )
    assert b"Traceback" not in proc.stderr


def test_only_a_peer_in_our_sandbox_is_us(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert place.peer_is_us(a)
        if not hasattr(socket, "SO_PEERCRED"):
            return  # macOS: the uid alone
        real = os.readlink

        def elsewhere(path: str) -> str:
            got = real(path)
            return got + "-another" if path.endswith("/ns/mnt") and "self" not in path else got

        monkeypatch.setattr(os, "readlink", elsewhere)
        assert not place.peer_is_us(a), "a peer in another mount namespace was trusted"


def test_two_starts_at_once_make_one_server(runtime: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "deja_blame", "server", "start", "--json"],
            stdout=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    try:
        docs = [orjson.loads(p.communicate(timeout=60)[0]) for p in procs]
        assert docs[0]["pid"] == docs[1]["pid"]
        assert sorted(d["status"] for d in docs) == ["already running", "started"]
    finally:
        deja("server", "stop")


def test_a_library_s_upgrade_is_changed_code() -> None:
    import click

    files = server.code_files()
    assert click.__file__ in files
    assert os.path.join(os.path.dirname(click.__file__), "core.py") in files  # edited in place


def test_a_caller_that_leaves_after_its_answer_interrupts_nothing(
    running: Path, history: Path
) -> None:
    """The caller exits as soon as it has its exit code; the fork then keeps what the
    answer learnt (``later.py``). That going is not a caller killed mid-command: no
    'interrupted', and the cache is written, every time."""
    import sqlite3

    db = Path(os.environ["DEJA_DB"])
    deja("blame", "a.py", "--json", cwd=history)  # the index made
    for _ in range(8):
        with sqlite3.connect(db) as conn:
            conn.execute("DELETE FROM attribution_cache")
        got = deja("blame", "a.py", "--json", cwd=history)
        assert b"interrupted" not in got.stderr
        assert _cached_answers_soon(db) == 1, "the deferred cache write was interrupted"


def test_a_reader_that_stops_early_is_exit_0_either_way(running: Path, history: Path) -> None:
    """``deja blame big.py --json | head -1``: the pipe breaks under the command; alone
    deja says 0 for that, and so it does through the server (click would say 1)."""
    (history / "big.py").write_text("".join(f"v_{i} = {i}\n" for i in range(20_000)))
    git(history, "add", "big.py")
    git(history, "commit", "-qm", "big")
    script = (
        f'"{sys.executable}" -m deja_blame blame big.py --json | head -c 10 >/dev/null;'
        ' echo "${PIPESTATUS[0]}"'
    )
    for server_on in ("1", "0"):
        got = subprocess.run(
            ["bash", "-c", script],
            cwd=history,
            capture_output=True,
            env={**os.environ, "DEJA_SERVER": server_on},
        )
        assert got.stdout.strip() == b"0", (server_on, got.stderr)


def test_the_error_says_why_there_is_no_socket(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (runtime / f"deja-{os.getuid()}").mkdir(mode=0o755)
    (runtime / f"deja-{os.getuid()}").chmod(0o755)
    got = deja("server", "start", check=False)
    assert got.returncode == 1
    assert b"is open to others (mode 755, not 700)" in got.stderr
    assert str(runtime).encode() in got.stderr


def test_a_server_sent_sigterm_takes_its_socket_with_it(runtime: Path) -> None:
    doc = orjson.loads(deja("server", "start", "--json").stdout)
    os.kill(doc["pid"], signal.SIGTERM)
    deadline = time.monotonic() + 20
    while os.path.exists(doc["socket"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(doc["socket"]), "a stale socket was left behind"


def test_doctor_says_whether_a_server_answers(runtime: Path, history: Path) -> None:
    """An optional part: never a problem, but doctor says whether commands are handed
    to a server, and why none can run where its folder is not private."""

    def server_check() -> dict[str, object]:
        doc = orjson.loads(deja("doctor", "--json", cwd=history, check=False).stdout)
        return next(c for c in doc["checks"] if c["name"] == "server")

    idle = server_check()
    assert idle["ok"] is True and "not running" in str(idle["detail"])
    deja("server", "start", "--idle", "2")
    try:
        up = server_check()
        assert up["ok"] is True and str(up["detail"]).startswith("running (pid ")
    finally:
        deja("server", "stop")
    os.chmod(place.folder(), 0o755)  # open to others: no socket may go there
    try:
        refused = server_check()
        assert refused["ok"] is True and "open to others" in str(refused["detail"])
    finally:
        os.chmod(place.folder(), 0o700)


def test_loaded_code_is_statted_only_after_a_change_in_its_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stat of every code file before each fork (1.3 ms) is made only after the
    kernel reported something in their folders: then a changed file is seen, and an
    event that changed none of them (a file made beside) leaves the server serving."""
    folder = tmp_path / "code"
    folder.mkdir()
    files = [str(folder / f"m{i}.py") for i in range(3)]
    for f in files:
        Path(f).write_text("x = 1\n")
    code = server.LoadedCode(files)
    stats: list[int] = []
    real = server.code_stamp
    monkeypatch.setattr(server, "code_stamp", lambda fs: stats.append(1) or real(fs))
    assert code.unchanged() and code.unchanged() and stats == []  # quiet: no stat
    (folder / "notes.txt").write_text("beside\n")
    assert code.unchanged() and stats == [1]  # an event: looked, the same
    assert code.unchanged() and stats == [1]  # quiet again
    Path(files[1]).write_text("x = 2\n")
    assert not code.unchanged()
    assert not code.unchanged()  # until the server stops: not settled
    # no inotify (another system, a folder it could not watch): a stat every time
    blind = server.LoadedCode([*files, str(tmp_path / "gone" / "m.py")])
    stats.clear()
    assert blind.unchanged() and blind.unchanged() and len(stats) == 2
