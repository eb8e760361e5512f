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


def test_demo_runs_the_main_job_on_the_bundled_fixtures() -> None:
    """The README's quick start: index, list, show, and blame a rebuilt clone."""
    from conftest import REPO_ROOT

    proc = deja("demo", cwd=REPO_ROOT)
    out = proc.stdout.decode()
    assert "3f2a9c1e" in out and "b81d4f60" in out  # both demo sessions listed
    assert "The cart total is wrong" in out
    # the agent's line of src/cart.py and its new test file are the session's
    agent = [ln for ln in out.splitlines() if "3f2a9c1e agy" in ln]
    assert any("return round(sum(item.price * item.quantity" in ln for ln in agent)
    assert sum("test_cart_quantity" in ln or "assert total" in ln for ln in agent) >= 2
    person = [ln for ln in out.splitlines() if ln.endswith("def total(items):")]
    assert person and all("3f2a9c1e" not in ln for ln in person)
    assert "$ python -m pytest -q  exit 0" in out
