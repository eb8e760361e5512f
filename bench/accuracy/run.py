"""Measure how well ``deja blame`` attributes lines: precision and recall per scenario.

Each scenario builds a git repository and real-format Antigravity transcripts
in a temporary directory, knowing who wrote every line; then ``deja index`` and
``deja blame FILE --json`` run against it (``DEJA_DB`` and
``DEJA_ANTIGRAVITY_ROOT`` point into the same directory) and the answers are
scored:

- precision: lines given to the session that really wrote them / lines given
  to any session;
- recall: agent-written lines given to their session / agent-written lines.

Usage::

    .venv/bin/python bench/accuracy/run.py                  # table
    .venv/bin/python bench/accuracy/run.py --json           # one JSON document
    .venv/bin/python bench/accuracy/run.py -k moved -v      # one scenario, with the wrong lines
    .venv/bin/python bench/accuracy/run.py --truth          # the ground truth only (no deja)

``DEJA_BENCH_CMD="deja"`` runs another deja than this Python's ``-m deja_blame``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from scenarios import SCENARIOS  # noqa: E402
from sim import Score, Sim, required_count  # noqa: E402

PRECISION_GOAL = 0.99
RECALL_GOAL = 0.95


def build(name: str, workdir: Path, small: bool = False) -> Sim:
    """Build scenario ``name`` under ``workdir`` (repository, transcripts, truth)."""
    sim = Sim(workdir, name)
    SCENARIOS[name].build(sim, small)
    return sim


def run_scenario(name: str, workdir: Path, small: bool = False, notes: bool = False) -> Score:
    return build(name, workdir, small).run_deja(notes=notes)


def truth_only(name: str, workdir: Path, small: bool) -> Score:
    sim = build(name, workdir, small)
    score = Score(name)
    for t in sim.targets:
        score.lines += len(t.truth)
        score.agent_lines += required_count(t.truth)
    return score


def _pct(x: float) -> str:
    return f"{x * 100:6.1f}%"


def table(scores: list[Score]) -> str:
    head = (
        f"{'scenario':<28} {'lines':>5} {'agent':>5} {'given':>5} {'right':>5} "
        f"{'wrong':>5} {'missed':>6} {'precision':>9} {'recall':>7}  note"
    )
    rows = [head, "-" * len(head)]
    tot = Score("TOTAL")
    for s in scores:
        note = ""
        if s.error:
            note = "ERROR: " + s.error.splitlines()[0][:90]
        elif s.precision < PRECISION_GOAL or s.recall < RECALL_GOAL:
            note = "below goal"
        rows.append(
            f"{s.scenario:<28} {s.lines:>5} {s.agent_lines:>5} {s.attributed:>5} "
            f"{s.correct:>5} {s.wrong:>5} {s.missed:>6} {_pct(s.precision):>9} "
            f"{_pct(s.recall):>7}  {note}"
        )
        if not s.error:
            tot.lines += s.lines
            tot.agent_lines += s.agent_lines
            tot.attributed += s.attributed
            tot.correct += s.correct
            tot.found += s.found
    rows.append("-" * len(head))
    rows.append(
        f"{'TOTAL (scored)':<28} {tot.lines:>5} {tot.agent_lines:>5} {tot.attributed:>5} "
        f"{tot.correct:>5} {tot.wrong:>5} {tot.missed:>6} {_pct(tot.precision):>9} "
        f"{_pct(tot.recall):>7}"
    )
    return "\n".join(rows)


def details(scores: list[Score], limit: int) -> str:
    out: list[str] = []
    for s in scores:
        if not s.mismatches:
            continue
        out.append(f"\n{s.scenario}: {len(s.mismatches)} line(s) wrong")
        for m in s.mismatches[:limit]:
            where = f"{m.path}@{m.rev or 'worktree'}:{m.line}"
            out.append(
                f"  {where:<36} expected {m.expected or '-':<22} got {m.got or '-':<22} | {m.text}"
            )
        if len(s.mismatches) > limit:
            out.append(f"  ... {len(s.mismatches) - limit} more")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument("--small", action="store_true", help="the small versions (the pytest ones)")
    ap.add_argument(
        "-k",
        dest="only",
        action="append",
        default=[],
        help="scenarios whose name contains this (repeatable)",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="list every wrong line")
    ap.add_argument("--truth", action="store_true", help="build and count the truth only; no deja")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument(
        "--notes",
        action="store_true",
        help="annotate the history (deja annotate --all) before blaming: blame reads the notes",
    )
    args = ap.parse_args(argv)

    names = [n for n in SCENARIOS if not args.only or any(k in n for k in args.only)]
    if args.list:
        for n in names:
            print(f"{n:<28} {SCENARIOS[n].about}")
        return 0
    if not names:
        print("no scenario matches", file=sys.stderr)
        return 2

    base = Path(tempfile.mkdtemp(prefix="deja-accuracy-"))
    scores: list[Score] = []
    try:
        for name in names:
            workdir = base / name
            if args.truth:
                scores.append(truth_only(name, workdir, args.small))
            else:
                scores.append(run_scenario(name, workdir, args.small, args.notes))
    finally:
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)

    if args.json:
        doc = {
            "precision_goal": PRECISION_GOAL,
            "recall_goal": RECALL_GOAL,
            "small": args.small,
            "notes": args.notes,
            "scenarios": [s.to_json() for s in scores],
        }
        print(json.dumps(doc, indent=2))
    else:
        print_scores(scores, args.verbose)
    return 0


def print_scores(scores: list[Score], verbose: bool) -> None:
    """The table, then the wrong lines (the first 8 of each, or all with ``verbose``)."""
    print(table(scores))
    text = details(scores, limit=10**6 if verbose else 8)
    if text:
        print(text)


if __name__ == "__main__":
    sys.exit(main())
