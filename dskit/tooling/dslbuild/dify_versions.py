"""Which Dify release accepts what: the DSL version each release writes, and the features we use.

The files in ``dsl/`` target the project's minimum Dify (:data:`dskit.base.limits.MIN_DIFY_VERSION`,
1.8.0: the first release whose code nodes and if-else conditions take booleans, langgenius/dify
PR #24437). ``dskit gen --dify-version X.Y`` builds them for another release, and
``dskit check-dsl --dify-version X.Y`` reports what a file needs beyond that release.

Dify's import (api/services/app_dsl_service.py, ``_check_version_compatibility``; later
api/services/dsl_version.py) compares the file's ``version`` with the server's
``CURRENT_DSL_VERSION``: newer than the server's, or an older major -> "pending" (the user must
confirm, and ``confirm_import`` then skips the plugin-dependency prompt); an older minor ->
imported with a warning; otherwise imported cleanly. So the version to ship is the newest one that
no supported release finds newer than its own.

``CURRENT_DSL_VERSION`` per release, read from Dify's source at the commit that set each release's
version (``chore: bump version to X``): 1.0.0-1.2.0 "0.1.5"; 1.3.x "0.2.0"; 1.4.0-1.6.0 "0.3.0";
1.7.0 "0.3.1" (set in the 1.7.0 bump commit itself); 1.9.1 "0.4.0"; main in late 2026 "0.6.0".
No copy of 1.8.x was at hand: its value is 0.3.1 or 0.4.0 (between 1.7.0's and 1.9.1's), so a file
for 1.8 says "0.3.1", which 1.8.x imports without the confirmation whichever it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dskit.base.limits import MIN_DIFY_VERSION

Release = tuple[int, int]

# (first release, CURRENT_DSL_VERSION it ships), verified points only, oldest first. A release
# between two points has at least the earlier point's version (it only ever grows).
DSL_VERSIONS: tuple[tuple[Release, str], ...] = (
    ((1, 0), "0.1.5"),
    ((1, 3), "0.2.0"),
    ((1, 4), "0.3.0"),
    ((1, 7), "0.3.1"),
    ((1, 9), "0.4.0"),
)
OLDEST_SUPPORTED: Release = (1, 0)  # model providers are plugins (``dependencies``) from 1.0 on
BOOLEANS_SINCE: Release = (1, 8)  # boolean code outputs, if-else on booleans (PR #24437)


class DifyVersionError(ValueError):
    """A release name we cannot build for (malformed, or older than 1.0)."""


def parse_release(text: str) -> Release:
    """``"1.8"`` or ``"1.8.0"`` -> ``(1, 8)``; refuses anything else and releases before 1.0."""
    match = re.fullmatch(r"\s*(\d{1,3})\.(\d{1,3})(?:\.\d{1,3})?\s*", str(text))
    if not match:
        raise DifyVersionError(f"a Dify release looks like 1.8 or 1.8.0, got {text!r}")
    release = (int(match.group(1)), int(match.group(2)))
    if release < OLDEST_SUPPORTED:
        raise DifyVersionError(f"Dify {text} predates plugins (1.0): its DSL cannot name model plugins")
    return release


MIN_RELEASE: Release = parse_release(MIN_DIFY_VERSION)


def dsl_version_for(release: Release) -> str:
    """The DSL version a file for ``release`` declares: the newest one that release surely accepts."""
    found = DSL_VERSIONS[0][1]
    for first, version in DSL_VERSIONS:
        if first <= release:
            found = version
    return found


def version_key(version: str) -> tuple[int, ...]:
    """``"0.3.1"`` -> ``(0, 3, 1)`` for comparing DSL versions (missing parts count as 0)."""
    parts = [int(p) for p in re.findall(r"\d+", version)[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


def confirmation_needed(file_version: str, release: Release) -> bool:
    """Whether importing a file of ``file_version`` may stop at Dify's confirmation on ``release``.

    Dify's rule: newer than the server's version, or an older major. The server's version is only
    known as a lower bound between verified releases, so "may" counts as yes.
    """
    server = version_key(dsl_version_for(release))
    mine = version_key(file_version)
    return mine > server or mine[0] < server[0]


@dataclass(frozen=True)
class Target:
    """What the generated files may use on one Dify release."""

    release: Release

    @property
    def dsl_version(self) -> str:
        return dsl_version_for(self.release)

    @property
    def booleans(self) -> bool:
        """Boolean code outputs and boolean if-else conditions (else numbers 0/1)."""
        return self.release >= BOOLEANS_SINCE

    @property
    def name(self) -> str:
        return f"{self.release[0]}.{self.release[1]}"


DEFAULT_TARGET = Target(MIN_RELEASE)
