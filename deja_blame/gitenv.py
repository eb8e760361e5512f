"""The environment every ``git`` deja runs gets: without the inherited ``GIT_*``
variables that would point it at another worktree or index (pre-commit's
``no_git_env``): a hook runs with GIT_DIR/GIT_INDEX_FILE set for the commit in
progress. Its own module: both ways of reading a repository (``gitutil``'s pygit2
and ``gitcli``'s git program) use it, and neither imports the other for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

_KEEP_GIT_VARS = {
    "GIT_EXEC_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSL_CAINFO",
    "GIT_SSL_NO_VERIFY",
    "GIT_ASKPASS",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_GLOBAL",
    "GIT_TERMINAL_PROMPT",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
}


def no_git_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if env is None else env
    return {
        k: v
        for k, v in env.items()
        if not k.startswith("GIT_")
        or k in _KEEP_GIT_VARS
        or k.startswith("GIT_CONFIG_KEY_")
        or k.startswith("GIT_CONFIG_VALUE_")
        or k == "GIT_CONFIG_COUNT"
    }
