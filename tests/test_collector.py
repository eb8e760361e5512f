"""The cyclic garbage collector waits while one question's answer is made."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deja_blame import collector
from deja_blame.attribution import api
from deja_blame.attribution import blame as blame_mod
from tests.conftest import git


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_paused_inside_and_restored_after() -> None:
    with collector.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_inside_another_does_not_end_it() -> None:
    with collector.collector_paused():
        with collector.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector.collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_error_inside_restores_the_collector() -> None:
    with pytest.raises(RuntimeError), collector.collector_paused():
        raise RuntimeError("the question failed")
    assert gc.isenabled()


def test_questions_on_two_threads_share_one_pause() -> None:
    # the first thread's question ends while the second's is under way: the collector
    # stays off until the second ends too
    second_in, first_out, second_may_end = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with collector.collector_paused():
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        with collector.collector_paused():
            second_in.set()
            second_may_end.wait(10)
            seen.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    assert first_out.wait(10)
    assert not gc.isenabled()
    second_may_end.set()
    for t in threads:
        t.join(10)
    assert seen == [False]
    assert gc.isenabled()


def _committed_file(repo: Path) -> Path:
    path = repo / "cart.py"
    path.write_text("def total(order):\n    return sum(order)\n")
    git(repo, "add", "cart.py")
    git(repo, "commit", "-q", "-m", "cart")
    return path


@pytest.mark.parametrize("one_question", [True, False])
def test_one_question_blames_its_file_with_the_collector_paused(
    repo: Path, monkeypatch: pytest.MonkeyPatch, one_question: bool
) -> None:
    path = _committed_file(repo)
    real = blame_mod.blame_versions
    during: list[bool] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        during.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(blame_mod, "blame_versions", recording)
    result = api.compute(None, path, None, None, refresh=False, one_question=one_question)
    assert [ln.text for ln in result.lines] == ["def total(order):", "    return sum(order)"]
    # a process asking one question pauses it; one asking many (stats) keeps it on
    assert during == [not one_question]
    assert gc.isenabled()
