from pathlib import Path

import pytest
from conftest import deja


def test_help_lists_commands() -> None:
    out = deja("--help").stdout.decode()
    for name in ("index", "parse", "sessions", "show"):
        assert name in out


def test_help_names_every_agent_deja_reads() -> None:
    """A newcomer reads ``deja --help`` to learn whether their agent is covered: it
    names each agent of the registry (18), not the first four."""
    from deja_blame.transcripts.registry import AGENTS

    out = " ".join(deja("--help").stdout.decode().split())  # as wrapped, rejoined
    missing = [a.display_name for a in AGENTS if a.display_name not in out]
    assert len(AGENTS) == 18 and missing == []


def test_blame_help_names_every_agent_s_word() -> None:
    """``deja blame --help`` lists the words its agent column shows: every agent's
    (NEWCOMER13 #4: it ended at ``kilo``, without ``specstory``)."""
    from deja_blame.transcripts.registry import AGENTS

    out = deja("blame", "--help").stdout.decode()
    listed = " ".join(out.split("agents:", 1)[1].split("\n\n", 1)[0].split())
    words = [w.strip(" .,") for w in listed.replace("(Antigravity)", "").split(",")]
    assert words == [a.label for a in AGENTS], listed


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


def test_demo_as_a_newcomer_runs_it_trusts_its_own_transcripts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The quick start as written: nobody has said ``deja trust`` (the suite's own
    DEJA_TRUSTED aside). The demo's transcripts are tracked by the checkout, which
    the provenance gate leaves out; running ``deja demo`` is asking to read them."""
    from conftest import REPO_ROOT

    monkeypatch.delenv("DEJA_TRUSTED", raising=False)
    proc = deja("demo", cwd=REPO_ROOT)
    out = proc.stdout.decode()
    assert "3f2a9c1e" in out and "b81d4f60" in out
    assert "left out" not in proc.stderr.decode()
    assert any("3f2a9c1e agy" in ln for ln in out.splitlines())


def _modules_loaded(*args: str) -> set[str]:
    """The modules a ``deja ARGS`` run imported (its stdout is dropped)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from deja_blame.entry import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write(' '.join(sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, check=True, timeout=60
    )
    return set(proc.stderr.decode().split())


def test_version_and_help_start_without_the_index_or_git() -> None:
    """Every run pays for what start-up imports: --version needs not even click."""
    out = deja("--version").stdout.decode()
    from deja_blame import __version__

    assert out == f"deja, version {__version__}\n"  # click's version_option's words
    assert not {"click", "pygit2", "sqlite3"} & _modules_loaded("--version")
    for args in (["--help"], ["blame", "--help"], ["index", "--help"]):
        loaded = _modules_loaded(*args)
        assert "click" in loaded
        assert not {"pygit2", "sqlite3", "deja_blame.index.db"} & loaded, args


def test_a_cached_answer_loads_none_of_the_rules() -> None:
    """``deja blame`` and ``deja why`` import the attribution cache before they know
    whether the answer is cached: it names the rules' version and the notes' refs
    without loading the rules' facts (``facts/model.py`` and what it brings) nor the
    notes' schema, which only a computed answer needs."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import deja_blame.commands.blame, deja_blame.commands.why\n"
        "sys.stderr.write(' '.join(sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, timeout=60)
    loaded = set(proc.stderr.decode().split())
    assert "deja_blame.attribution.cache" in loaded
    rules = {
        "deja_blame.attribution.facts.model",
        "deja_blame.attribution.facts.repository",
        "deja_blame.attribution.facts.edits",
        "deja_blame.notes.schema",
    }
    assert not rules & loaded, rules & loaded
