"""Held-out check of the Antigravity reader on real transcripts, against an independent count.

Point it at a directory holding real sessions (any layout: every
``.system_generated/logs/`` under it is one session, its directory name above
``.system_generated`` the session id). Per session it prints what deja reads
(agent edits, commands, commands with an exit code, user requests, the
guessed project, start and end) beside ``antigravity_raw_count.py``'s count of
the raw records, and the project a person judged right (``--truth``, a JSON
file ``{"<session id>": ["<project>", ...]}``, the answers judged right; a
plain string is one answer).

    python bench/antigravity_real.py /tmp/agroot --truth /tmp/agroot/truth.json
    python bench/antigravity_real.py /tmp/agroot --json    # one object per session

Real transcripts carry no licence and personal text: keep them outside the
repository (``/tmp``), never as fixtures. To compare with an older deja, run
this file with ``PYTHONPATH`` pointing at that version's checkout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from antigravity_raw_count import count, sessions_under  # noqa: E402

try:
    from deja_blame.transcripts.antigravity.discover import find_transcripts
    from deja_blame.transcripts.registry import read_session
except ImportError:  # a deja from before the agent plug-ins, to compare with
    from deja_blame.transcripts.harnesses import read_session  # type: ignore[no-redef]
    from deja_blame.transcripts.roots import find_transcripts  # type: ignore[no-redef]


def deja_counts(logs: str, sid: str) -> dict:
    brain = Path(logs).parent.parent.parent
    root = brain.parent
    tf = next((t for t in find_transcripts(root) if t.session_id == sid), None)
    if tf is None:
        return {}
    s = read_session(tf)
    return {
        "edits": sum(1 for e in s.edits if e.source == "agent"),
        "commands": len(s.commands),
        "exits": sum(1 for c in s.commands if c.exit_code is not None),
        "prompts": sum(1 for m in s.messages if m.role == "user"),
        "first": s.started_at,
        "last": s.ended_at,
        "project": s.project,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("top", help="directory holding real sessions")
    ap.add_argument("--truth", help='JSON {"<session id>": ["<right project>", ...]}')
    ap.add_argument("--json", action="store_true", help="one JSON object per session")
    args = ap.parse_args()
    truth = json.loads(Path(args.truth).read_text()) if args.truth else {}
    totals = {k: [0, 0] for k in ("edits", "commands", "exits", "prompts")}
    right = wrong = times_off = 0
    rows = []
    for sid, logs in sorted(sessions_under(args.top).items()):
        raw, got = count(logs), deja_counts(logs, sid)
        for k in totals:
            totals[k][0] += got.get(k, 0)
            totals[k][1] += raw[k]
        want = truth.get(sid)
        answers = [want] if isinstance(want, str) else (want or [])
        got_project = str(got.get("project", "-")).lower()
        ok = None if want is None else any(got_project == a.lower() for a in answers)
        right += ok is True
        wrong += ok is False
        times_off += (got.get("first"), got.get("last")) != (raw["first"], raw["last"])
        rows.append((sid, raw, got, answers if want is not None else None, ok))
    if args.json:
        for sid, raw, got, want, _ok in rows:
            print(json.dumps({"session": sid, "raw": raw, "deja": got, "truth": want}))
        return 0
    print(f"{'session':10} {'edits':>9} {'commands':>9} {'exits':>9} {'prompts':>9}  project")
    for sid, raw, got, want, ok in rows:
        cells = " ".join(f"{got.get(k, 0):>4}/{raw[k]:<4}" for k in totals)
        mark = {True: "ok ", False: "BAD", None: "   "}[ok]
        print(f"{sid[:10]:10} {cells}  {mark} {got.get('project')}")
        if ok is False:
            print(f"{'':10} {'':39}      want {' or '.join(want or [])}")
    cells = " ".join(f"{totals[k][0]:>4}/{totals[k][1]:<4}" for k in totals)
    print(f"{'total':10} {cells}")
    print(
        f"{len(rows)} sessions (deja/raw); projects right {right}, wrong {wrong};"
        f" start or end differing from the raw earliest/latest: {times_off}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
