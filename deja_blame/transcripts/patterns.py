"""Every regular expression of the Antigravity reader, each with the line it matches."""

from __future__ import annotations

import re

# <USER_REQUEST>Check the build.</USER_REQUEST>   (the outer wrapper: at the start, or
# at the start of a line after the lines an IDE approval puts before it)
USER_REQUEST_OPEN = re.compile(r"^\s*<USER_REQUEST>")
USER_REQUEST_LINE = re.compile(r"^[ \t]*<USER_REQUEST>", re.MULTILINE)
USER_REQUEST_CLOSE = re.compile(r"</USER_REQUEST>")

# <ADDITIONAL_METADATA>{"cwd": "/work/api"}</ADDITIONAL_METADATA>  (complete blocks only:
# an opening tag with the next closing tag and no other opening tag in between, so a
# stray "<ADDITIONAL_METADATA>" the person typed does not swallow their text)
METADATA_BLOCK = re.compile(
    r"<(ADDITIONAL_METADATA|USER_SETTINGS_CHANGE)>(?:(?!<\1>).)*?</\1>", re.DOTALL
)

# Comments on artifact URI: file:///home/u/.gemini/antigravity/brain/x/plan.md
ARTIFACT_COMMENT = re.compile(r"^[ \t]*Comments on artifact URI:.*(?:\n|$)", re.MULTILINE)

# Created At: 2026-07-17T12:00:03+03:00   /   Completed At: ...   (tool step header)
STEP_HEADER = re.compile(r"^[ \t]*(Created At|Completed At):.*$")

# Status: DONE   (a header line some builds write instead of a top-level key)
STATUS_LINE = re.compile(r"^[ \t]*Status:[ \t]*(\w+)", re.MULTILINE | re.IGNORECASE)

# Task Description: npm test
TASK_DESCRIPTION = re.compile(r"^[ \t]*Task Description:[ \t]*(.*?)[ \t]*$", re.MULTILINE)

# \tThe command exited with code 1.
EXITED_WITH_CODE = re.compile(r"The command exited with code (-?\d+)\.?")
# The command failed with exit code: 3
FAILED_WITH_CODE = re.compile(r"The command failed with exit code:?\s*(-?\d+)")
# The command completed successfully.
COMPLETED_OK = re.compile(r"The command completed successfully")

# The following changes were made by the replace_file_content tool to: /home/u/a.py. If relevant, ...
# The following changes were made by the USER to: /home/u/a.py
CHANGES_MADE_BY = re.compile(
    r"The following changes were made by the (?:(?P<tool>[A-Za-z_]+) tool|(?P<user>USER))"
    r" to:[ \t]*(?P<rest>[^\n]*)"
)

# [diff_block_start] ... [diff_block_end]: found with str.find (diffblock.find_diff_blocks)

# In a <USER_SETTINGS_CHANGE> block: The user changed setting `Model Selection` from
# None to Gemini 3.5 Flash (Medium). No need to comment ...
MODEL_SELECTION = re.compile(
    r"The user changed setting `Model Selection` from (?P<old>.*?) to (?P<new>.+?)\.(?=\s|$)"
)

# The IDE's notice of the person's own change, in a USER_EXPLICIT record: the
# notice line, its diff block, and the "Please note ... not shown." that may follow.
# Not a request of the person (the change itself is read as the person's edit).
USER_CHANGE_NOTICE = re.compile(
    r"The following changes were made by the USER to:[^\n]*"
    r"(?:\s*\[diff_block_start\].*?\[diff_block_end\])?"
    r"(?:\s*Please note that the above snippet only shows[^\n]*)?",
    re.DOTALL,
)

# Created file file:///home/u/shop/c.py with requested content.
CREATED_FILE = re.compile(r"Created file[ \t]+(\S+)")
# the same sentence, whole: what tells a GENERIC step that wrote a file
CREATED_FILE_DONE = re.compile(r"Created file[ \t]+\S+[ \t]+with requested content")

# Task Description: Timer: 30s, Prompt: Check the build again   (a schedule tool's timer)
TIMER_DESCRIPTION = re.compile(r"Timer:[ \t]*\d+(?:\.\d+)?\s*[smh]\b")

# The USER performed the following action:   (an IDE event in a USER_EXPLICIT record:
# the person opened a file or ran a command, with its output; not a request)
IDE_ACTION = "The USER performed the following action"

# File Path: `file:///home/u/shop/a.py`
FILE_PATH_LINE = re.compile(r"File Path:[ \t]*`?([^`\n]+?)`?[ \t]*$", re.MULTILINE)

# The first absolute path of a body: file:///x, /x/y, C:\x or C:/x
ABSOLUTE_PATH = re.compile(
    r"(?P<path>file://[^\s`'\"<>)]+|(?<![\w.~])/(?:[^\s`'\"<>:]+)|\b[A-Za-z]:[\\/][^\s`'\"<>]*)"
)

# <truncated 807 bytes>   (a compact transcript cut a long argument value)
TRUNCATED_MARK = re.compile(r"<truncated \d+ bytes>")

# @@ -10,2 +10,3 @@ optional section
HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
