from pathlib import Path

from conftest import deja


def test_help_lists_commands() -> None:
    out = deja("--help").stdout.decode()
    for name in ("index", "parse", "sessions", "show"):
        assert name in out


def test_unknown_session_is_one_line_error(tmp_path: Path) -> None:
    deja("index", "--root", str(tmp_path))
    proc = deja("show", "nope", check=False)
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith("deja: error: no indexed session")
    assert "Traceback" not in proc.stderr.decode()
