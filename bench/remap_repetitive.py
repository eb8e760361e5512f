"""Benchmark: blame of a 30,000-line file of repeating lines (a lockfile), from the
commit's own note, from the index, and from a note git copied onto an amended
commit (remapped by line text: notes/remap.py, deja_blame/linediff.py).

    python bench/remap_repetitive.py CHECKOUT [LINES] [--keep]

CHECKOUT is the deja source tree to time (put first on PYTHONPATH: run it on
main's checkout and on a branch's, alternately, for a side-by-side ratio).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WT = Path(sys.argv[1])
PY = sys.executable
os.environ["PYTHONPATH"] = str(WT)
N = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
sys.path.insert(0, str(Path(__file__).resolve().parent / "accuracy"))
from antigravity_writer import TranscriptWriter  # noqa: E402

tmp = Path(tempfile.mkdtemp(prefix="rep3-"))
repo = tmp / "repo"
repo.mkdir()
env = {
    **os.environ,
    "DEJA_DB": str(tmp / "db"),
    "DEJA_ANTIGRAVITY_ROOT": str(tmp / "agy"),
    "HOME": str(tmp),
    "XDG_DATA_HOME": str(tmp / "xdg"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "p",
    "GIT_AUTHOR_EMAIL": "p@x",
    "GIT_COMMITTER_NAME": "p",
    "GIT_COMMITTER_EMAIL": "p@x",
    "GIT_AUTHOR_DATE": "1784278800 +0000",
    "GIT_COMMITTER_DATE": "1784278800 +0000",
}
(tmp / "agy").mkdir()


def git(*a, **kw):
    return subprocess.run(
        ["git", *a], cwd=repo, env=env, check=True, capture_output=True
    ).stdout.decode()


git("init", "-q")
git("config", "notes.rewriteRef", "refs/notes/deja")
(repo / "README").write_text("x\n")
git("add", "-A")
git("commit", "-qm", "init")
content = "".join(f'    "dep-{i % 10}": "^1.{i % 3}.0",\n' for i in range(N))
w = TranscriptWriter(
    tmp / "agy", "11111111-aaaa-4000-8000-000000000001", start=1784278900, workspace=str(repo)
)
w.user("write the lockfile")
w.set_time(1784278910)
w.write_file(str(repo / "lock.json"), content)
(repo / "lock.json").write_text(content)
env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = "1784279000 +0000"
git("add", "-A")
git("commit", "-qm", "lock")


def deja(*a, e=None):
    t = time.perf_counter()
    p = subprocess.run([PY, "-m", "deja_blame", *a], cwd=repo, env=e or env, capture_output=True)
    dt = time.perf_counter() - t
    if p.returncode:
        print("FAIL", a, p.stderr.decode()[-500:])
    return dt, p


print("index", round(deja("index", "-q")[0], 2))
old = git("rev-parse", "HEAD").strip()
print("annotate", round(deja("annotate")[0], 2))
noidx = {**env, "DEJA_DB": str(tmp / "fresh.db"), "DEJA_ANTIGRAVITY_ROOT": str(tmp / "none")}
dt, p = deja("blame", "lock.json", "--no-refresh", e=noidx)
print("blame own note (no index)", round(dt, 2), p.stdout.decode().count("11111111"))
dt, p = deja("blame", "lock.json", "--no-refresh")
print("blame with index", round(dt, 2), p.stdout.decode().count("11111111"))
# amend: message only -> git copies the note, naming the old commit
env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = "1784279100 +0000"
lines = content.splitlines(True)
lines[N // 2] = '    "changed": "1",\n'
(repo / "lock.json").write_text("".join(lines))
git("add", "-A")
git("commit", "-q", "--amend", "-m", "lock amended")
dt, p = deja("blame", "lock.json", "--no-refresh", e=noidx)
print("blame remapped note (no index)", round(dt, 2), p.stdout.decode().count("11111111"))
if "--keep" not in sys.argv:
    shutil.rmtree(tmp)
else:
    print(tmp)
