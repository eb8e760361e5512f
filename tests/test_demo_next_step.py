"""``deja demo`` run by someone whose own agents have transcripts here (NEWCOMER12 #1):
it advised ``deja --db /tmp/deja-demo-XXXX/index.db index``, an index the demo
deletes when it ends. It names the step that works: ``deja index``, into their own."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
from conftest import REPO_ROOT, deja


def test_the_demo_advises_the_persons_own_index_not_its_throwaway_one(tmp_path: Path) -> None:
    at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 600))
    record = {"sessionId": "c0c0c0c0-1111-4000-8000-00000000c0c0", "cwd": str(tmp_path),
              "isSidechain": False, "type": "user", "uuid": "u0", "timestamp": at,
              "message": {"role": "user", "content": "my own session"}}  # fmt: skip
    folder = Path.home() / ".claude" / "projects" / "-mine"
    folder.mkdir(parents=True)
    (folder / "c0c0c0c0-1111-4000-8000-00000000c0c0.jsonl").write_bytes(
        orjson.dumps(record) + b"\n"
    )

    proc = deja("demo", cwd=REPO_ROOT)
    err = proc.stderr.decode()
    assert "3f2a9c1e" in proc.stdout.decode()  # the demo ran
    advice = [ln for ln in err.splitlines() if "index" in ln and not ln.startswith("$ ")]
    assert advice, err
    assert all("deja-demo-" not in ln and "--db" not in ln for ln in advice), err
    assert "next: deja index reads your own agents' transcripts into your index" in err
