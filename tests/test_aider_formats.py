"""Aider's other edit formats, and the questions it logs as typed (readers 8's
leftovers): a ``udiff`` reply's hunks and a ``whole`` reply's files are edits once
aider says it applied them; ``#### Create new file? (Y)es/(N)o/(A)ll/(S)kip all
[Yes]: a`` (an answer an earlier "All" gave) is no request and ends no reply."""

from __future__ import annotations

from pathlib import Path

from deja_blame.transcripts.aider.reader import parse_transcript

HISTORY = """
# aider chat started at 2026-09-21 14:30:00

> Aider v0.86.1
> Main model: gpt-4o with udiff edit format

#### make the total skip None

Skipping None in `total`:

```diff
--- shop/cart.py
+++ shop/cart.py
@@ ... @@
 def total(items):
-    return sum(items)
+    return sum(i for i in items if i is not None)
```

> Applied edit to shop/cart.py

#### and add a mean, in a new file

```diff
--- /dev/null
+++ shop/stats.py
@@ ... @@
+def mean(items):
+    return sum(items) / len(items)
```

#### Create new file? (Y)es/(N)o/(A)ll/(S)kip all [Yes]: a

> Applied edit to shop/stats.py

#### /model gpt-4o --edit-format whole

> Main model: gpt-4o with whole edit format

#### write the README

shop/README.md
```
# Shop

Totals skip None.
```

notes.txt
```
not applied
```

> Applied edit to shop/README.md

#### now ask: is this fine?

Yes.
"""


def test_udiff_and_whole_replies_are_edits_and_aider_s_questions_no_request(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY)
    s = parse_transcript(path)
    root = str(tmp_path)
    assert [(e.path[len(root) + 1 :], e.tool, e.removed, e.added) for e in s.edits] == [
        (
            "shop/cart.py",
            "udiff",
            ["    return sum(items)"],
            ["    return sum(i for i in items if i is not None)"],
        ),
        ("shop/stats.py", "udiff", [], ["def mean(items):", "    return sum(items) / len(items)"]),
        ("shop/README.md", "whole", [], ["# Shop", "", "Totals skip None."]),
    ]
    requests = [m.text for m in s.messages if m.role == "user"]
    assert requests == [
        "make the total skip None",
        "and add a mean, in a new file",
        "write the README",
        "now ask: is this fine?",
    ]
