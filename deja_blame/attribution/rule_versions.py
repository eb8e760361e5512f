"""The versions of the rules that a cached answer names in its key (``cache.entry_key``):
a module of its own, so that reading a cached answer loads none of the rules' modules."""

from __future__ import annotations

# Who belongs (``facts/repository.py``, ``RepositoryIdentity``) decides which lines a
# session keeps, so an answer judged by other identity rules is never read: bump it
# when those rules change.
IDENTITY_VERSION = 4

# Part of every key, with deja's version: an answer computed by other rules (an
# upgrade, or a change of the matcher during development: bump this) is never read.
# (``cache.CACHE_VERSION`` is this one.)
CACHE_VERSION = 32
