"""The standard libraries of the Pythons a code node meets: dify-sandbox's 3.10 and this 3.12.

A pasted script may import what both have (:data:`NEWER_THAN_310` is what 3.12 adds). A module only one
of them has (``_sha2`` on 3.12, ``_sha256`` on 3.10: the same SHA-256 without loading OpenSSL) may be
tried where its absence falls back to another import: the sandbox check
(dskit/tooling/codegen/sandbox.py, ``_guarded_imports``) lets it through only there, and the bundler and
the engine's shape tests accept it as standard library.
"""

from __future__ import annotations

import sys

# Standard-library modules that exist on 3.12 but not on Python 3.10, the sandbox's interpreter on
# the dify-sandbox releases in wide use (python:3.10-slim image). Computed once against 3.10.13.
NEWER_THAN_310 = frozenset({"_pydatetime", "_pylong", "_sha2", "_tokenize", "_typing", "tomllib"})
# And those 3.10 has that 3.12 no longer has (3.10.13 against 3.12.1).
GONE_AFTER_310 = frozenset({"_bootsubprocess", "_sha256", "_sha512", "asynchat", "asyncore", "binhex", "distutils",
                            "imp", "smtpd"})


def in_a_stdlib(name: str) -> bool:
    """Whether the top-level module of ``name`` is in the standard library of this Python or of 3.10."""
    top = name.partition(".")[0]
    return top in sys.stdlib_module_names or top in GONE_AFTER_310
