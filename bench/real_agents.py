"""Every agent reader on real transcripts, against an independent count.

Point it at a directory holding real captures of any agents, laid out as each
agent keeps them or not at all (a folder of loose files is fine). Every file
under it that ``real_agents_raw.classify`` knows by its shape is one capture;
per capture it prints what deja reads (edits made by the agent, commands,
the person's requests, the model) beside ``real_agents_raw.count``'s count of
the raw records, whether deja's own discovery (``deja index --root DIR``) finds
it, and the files whose edit counts differ. A row that differs is marked ``!``.

    python bench/real_agents.py /tmp/captures
    python bench/real_agents.py /tmp/captures --json     # one object per capture

Real transcripts carry no licence and personal text: keep them outside the
repository (``/tmp``), never as fixtures. To compare with an older deja, run
this file with ``PYTHONPATH`` pointing at that version's checkout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_agents_raw import classify, count  # noqa: E402

from deja_blame.transcripts.registry import discover_in, parse_any, read_session  # noqa: E402

# the agent deja reads a capture with, where the count names its shape apart
DEJA_AGENT = {"copilot-chat": "copilot"}


def _norm(path: str | None) -> str:
    p = str(path or "").replace("\\", "/")
    return p[len("file://") :] if p.startswith("file://") else p


def _same_file(raw: str, got: str) -> bool:
    raw, got = _norm(raw), _norm(got)
    return got == raw or got.endswith("/" + raw.lstrip("./")) or got.lower() == raw.lower()


def deja_counts(path: Path, found: dict[Path, Any], agent: str) -> dict[str, Any]:
    try:
        tf = found.get(path)
        s = read_session(tf) if tf is not None else parse_any(path, DEJA_AGENT.get(agent, agent))
    except Exception as exc:  # a reader's crash is a finding, shown in the row
        return {"error": f"{type(exc).__name__}: {exc}"[:160]}
    return {
        "found": tf is not None,
        "agent": s.source,
        "edits": Counter(e.path for e in s.edits if e.source == "agent"),
        "commands": len(s.commands),
        "requests": sum(1 for m in s.messages if m.role == "user"),
        "model": s.model,
        "project": s.project,
    }


def compare(raw: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """What differs: edits by file, and the counts."""
    if "error" in got:
        return [got["error"]]
    diffs = []
    left = Counter(got["edits"])
    for f, n in raw["edits"].items():
        if not n:
            continue
        match = next((g for g in left if _same_file(f, g)), None)
        have = left.pop(match, 0) if match else 0
        if have != n:
            diffs.append(f"edits of {f}: deja {have}, raw {n}")
    diffs += [f"edits of {g}: deja {n}, raw 0" for g, n in left.items()]
    for key in ("commands", "requests"):
        if raw[key] != got[key]:
            diffs.append(f"{key}: deja {got[key]}, raw {raw[key]}")
    if raw["model"] and raw["model"] != got["model"]:
        diffs.append(f"model: deja {got['model']}, raw {raw['model']}")
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("top", help="directory holding real captures")
    ap.add_argument("--json", action="store_true", help="one JSON object per capture")
    args = ap.parse_args()
    top = Path(args.top).resolve()
    found = {tf.path.resolve(): tf for tf in discover_in([top])}
    rows = []
    for path in sorted(p for p in top.rglob("*") if p.is_file()):
        agent = classify(path)
        if agent is None:
            continue
        raw, got = count(path, agent), deja_counts(path.resolve(), found, agent)
        rows.append((path.relative_to(top), agent, raw, got, compare(raw, got)))
    if args.json:
        for rel, agent, raw, got, diffs in rows:
            print(
                json.dumps(
                    {
                        "capture": str(rel),
                        "agent": agent,
                        "raw": raw,
                        "deja": got,
                        "differences": diffs,
                    },
                    default=dict,
                )
            )
        return 0
    print(f"{'capture':52} {'agent':13} {'found':5} {'edits':>7} {'cmds':>7} {'reqs':>7}  model")
    for rel, agent, raw, got, diffs in rows:
        if "error" in got:
            print(f"! {str(rel)[:50]:50} {agent:13} {got['error']}")
            continue
        e = f"{sum(got['edits'].values())}/{sum(raw['edits'].values())}"
        c = f"{got['commands']}/{raw['commands']}"
        q = f"{got['requests']}/{raw['requests']}"
        mark = "!" if diffs else " "
        print(
            f"{mark} {str(rel)[:50]:50} {agent:13} {'yes' if got['found'] else 'no':5}"
            f" {e:>7} {c:>7} {q:>7}  {got['model'] or '-'} / {raw['model'] or '-'}"
        )
        for d in diffs:
            print(f"      {d}")
    differing = sum(1 for r in rows if r[4])
    print(
        f"\n{len(rows)} captures, {differing} differ (deja/raw: edits, commands, requests; "
        "model deja / raw)"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
