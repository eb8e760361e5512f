"""Stage 1: the facts a question needs, gathered from git and the index.

``gather.py`` gathers one file's (``FileFacts``); ``source.py`` answers what the
rules ask beyond them. Only this stage runs git (``git_blame.py``, ``history.py``,
``versions.py``, ``repository.py``) or reads the index (``writes.py``). The matcher,
stage 2, is ``attribution/match/``.
"""
