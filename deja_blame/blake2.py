"""BLAKE2b from its own module: ``hashlib``'s import costs 4-10 ms of a warm answer
(it sets up every OpenSSL digest), and these digests are all BLAKE2b."""

from __future__ import annotations

try:
    from _blake2 import blake2b as blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b as blake2b
