"""A static check for regular expressions that backtrack catastrophically (ReDoS).

A catalog's slot ``pattern`` is written once by an app builder and then runs on text from every
user. Python's ``re`` backtracks: ``(a+)+$`` needs about 2^n steps to fail on n letters "a" followed by
one "!", so 30 characters hold a Dify run for minutes. The catalog check refuses such patterns
before they run; the value length cap (the slot's ``max_length``) bounds what is left.

What is refused is a repeat that can iterate many times (``*``, ``+``, ``{m,}`` or a count above 10)
over a body that a string can go through in more than one way, so that the number of ways to split
a failing string grows exponentially:

1. **overlapping iterations**: the body can end with a repeat whose characters can also start the
   body (``(a+)+``, ``([A-Za-z0-9]+\\s?)*``), or start with a repeat whose characters can also end it
   (``(.*,)*``);
2. **ambiguous body**: two repeats in the body side by side (only optional items between them) that
   share characters (``(\\w+\\d+)*``);
3. **overlapping alternatives**: alternatives inside the repeated body that can start with the same
   character (``(a|a)*``, ``(\\w|\\d)+``, and also the harmless ``(ab|ac)*``: write ``(a[bc])*``).

Outside such repeats, three or more repeats side by side that share characters (``.*.*.*=``) are
refused too: polynomial, but n³ steps on a long value. Possessive repeats and atomic groups
(Python 3.11+) never backtrack and are exempt. Two character sets are taken to overlap when they
share a character of a sample: all of ASCII, a set of representative non-ASCII characters, and the
ends and some interior points of every range the pattern names.

The parse tree comes from the standard library's own regular-expression parser (``re._parser``,
``sre_parse`` before Python 3.11), so the check sees exactly what ``re`` compiles. Standard library
only (engine module).
"""

from __future__ import annotations

import re
from typing import Any

# A repeat whose maximum count is above this iterates "many times" (rules 1-3).
REDOS_MANY = 10
# Side-by-side overlapping repeats outside an iterating repeat that make a pattern polynomial
# beyond quadratic (rule 4).
REDOS_CHAIN = 3
_REPRESENTATIVES = ("\x85\xa0\xaa\xb2\xb5\xba\xc0\xd7\xdf\xe9\xf7\xff\u0100\u017f\u0391\u03c9\u0416"
                          "\u0436\u05d0\u0663\u0966\u1680\u2000\u200b\u2028\u2029\u202f\u205f\u2160\u3000"
                          "\u3007\u4e00\u4e2d\u9fa5\uac00\uff10\uff21\uff41\ufffd\U0001f600\U0001d7ce")
_RANGE_POINTS = 16


def _parse(pattern: str) -> Any:
    """The standard library's parse tree of ``pattern`` (raises re.error like re.compile)."""
    parser = getattr(re, "_parser", None)
    if parser is None:  # Python 3.10 (the Dify sandbox's up to dify-sandbox 0.2.12)
        import sre_parse as parser
    return parser.parse(pattern)


class _RedosInfo:
    """What a piece of pattern can match, as bitmasks over the sample characters.

    ``first``/``last``: characters a non-empty match can start/end with; ``chars``: every character it
    can consume; ``heads``/``tails``: characters that a count-varying repeat can start/end with, where
    that repeat can come first/last (only optional items before/after it); ``nullable``: it can match
    the empty string.
    """

    __slots__ = ("first", "last", "chars", "heads", "tails", "nullable")

    def __init__(self, first: int = 0, last: int = 0, chars: int = 0, heads: int = 0, tails: int = 0,
                 nullable: bool = True) -> None:
        self.first, self.last, self.chars = first, last, chars
        self.heads, self.tails, self.nullable = heads, tails, nullable


class _RedosChecker:
    """One pattern's check: walks the parse tree once, collecting problems."""

    def __init__(self, tree: Any) -> None:
        self.ignore_case = bool(tree.state.flags & re.IGNORECASE)
        self.sample = self._sample(tree)
        self.everything = (1 << len(self.sample)) - 1
        self.problems: list[str] = []

    # ------------------------------------------------------------ character sets

    def _sample(self, tree: Any) -> list[str]:
        points = {chr(i) for i in range(128)} | set(_REPRESENTATIVES)
        stack = [tree]
        while stack:
            node = stack.pop()
            for op, av in node:
                name = str(op)
                if name in ("LITERAL", "NOT_LITERAL"):
                    points.add(chr(av))
                elif name == "IN":
                    for item_op, item_av in av:
                        if str(item_op) == "LITERAL":
                            points.add(chr(item_av))
                        elif str(item_op) == "RANGE":
                            low, high = item_av
                            step = max(1, (high - low) // _RANGE_POINTS)
                            points.update(chr(c) for c in range(low, high + 1, step))
                            points.add(chr(high))
                else:
                    if name == "SUBPATTERN" and av[1] & re.IGNORECASE:
                        self.ignore_case = True
                    stack.extend(_children(name, av))
        return sorted(points)

    def _mask(self, accepts) -> int:
        mask = 0
        for index, char in enumerate(self.sample):
            other = char.swapcase() if self.ignore_case else char
            if accepts(char) or (len(other) == 1 and other != char and accepts(other)):
                mask |= 1 << index
        return mask

    def _class_mask(self, name: str, av: Any) -> int:
        if name == "LITERAL":
            return self._mask(lambda c: ord(c) == av)
        if name == "NOT_LITERAL":
            return self._mask(lambda c: ord(c) != av)
        if name == "ANY":
            return self.everything
        negate = bool(av) and str(av[0][0]) == "NEGATE"
        items = av[1:] if negate else av
        mask = self._mask(lambda c: any(_item_accepts(str(o), a, c) for o, a in items))
        return self.everything & ~mask if negate else mask

    # ------------------------------------------------------------ the walk

    def sequence(self, items: Any, iterated: bool) -> _RedosInfo:
        """Info of a concatenation; checks rule 2 (inside an iterated body) or rule 4 (outside)."""
        infos = [self.node(str(op), av, iterated) for op, av in items]
        self._check_neighbours(infos, iterated)
        info = _RedosInfo()
        for part in infos:  # forwards: first and heads stop at the first item that cannot be empty
            if info.nullable:
                info.first |= part.first
                info.heads |= part.heads
            info.chars |= part.chars
            info.nullable = info.nullable and part.nullable
        open_end = True
        for part in reversed(infos):
            if open_end:
                info.last |= part.last
                info.tails |= part.tails
            open_end = open_end and part.nullable
        return info

    def _check_neighbours(self, infos: list[_RedosInfo], iterated: bool) -> None:
        chain = 1
        for index, part in enumerate(infos):
            if not part.tails:
                continue
            overlapping = False
            for later in infos[index + 1:]:
                if part.tails & later.heads:
                    overlapping = True
                    break
                if not later.nullable:
                    break
            if not overlapping:
                chain = 1
                continue
            chain += 1
            if iterated:
                self.problems.append("inside a repeated group, two repeats side by side can match the same "
                                     "characters, e.g. (\\w+\\d+)*")
                return
            if chain >= REDOS_CHAIN:
                self.problems.append(f"{chain} repeats side by side can match the same characters, "
                                     "e.g. .*.*.*= (polynomial backtracking)")
                return

    def node(self, name: str, av: Any, iterated: bool) -> _RedosInfo:
        if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            mask = self._class_mask(name, av)
            return _RedosInfo(mask, mask, mask, 0, 0, False)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            return self.repeat(name, av, iterated)
        if name == "SUBPATTERN":
            return self.sequence(av[-1], iterated)
        if name == "ATOMIC_GROUP":
            inner = self.sequence(av, iterated)
            return _RedosInfo(inner.first, inner.last, inner.chars, 0, 0, inner.nullable)
        if name == "BRANCH":
            return self.branch(av[1], iterated)
        if name == "GROUPREF_EXISTS":
            return self.branch([av[1], av[2] or []], iterated)
        if name == "GROUPREF":  # a backreference: any text, of any length
            return _RedosInfo(self.everything, self.everything, self.everything, self.everything,
                              self.everything, True)
        if name in ("ASSERT", "ASSERT_NOT"):
            self.sequence(av[1], False)
        return _RedosInfo()  # anchors, lookarounds: zero-width

    def branch(self, alternatives: list, iterated: bool) -> _RedosInfo:
        infos = [self.sequence(alt, iterated) for alt in alternatives]
        if iterated:
            seen = 0
            empties = 0
            for info in infos:
                empties += info.nullable
                if info.first & seen or empties > 1:
                    self.problems.append("alternatives inside a repeated group can start with the same "
                                         "character, e.g. (a|ab)* (write (ab?)*)")
                    break
                seen |= info.first
        merged = _RedosInfo(nullable=False)
        for info in infos:
            merged.first |= info.first
            merged.last |= info.last
            merged.chars |= info.chars
            merged.heads |= info.heads
            merged.tails |= info.tails
            merged.nullable = merged.nullable or info.nullable
        if merged.nullable and not all(info.nullable for info in infos):  # (a|) is a?: (a|aa)* is (a(|a))*
            merged.heads |= merged.first
            merged.tails |= merged.last
        return merged

    def repeat(self, name: str, av: Any, iterated: bool) -> _RedosInfo:
        low, high, body_items = av
        possessive = name == "POSSESSIVE_REPEAT"
        many = high > REDOS_MANY and not possessive
        before = len(self.problems)
        body = self.sequence(body_items, iterated or many)
        if many and len(self.problems) == before and (body.tails & body.first or body.heads & body.last):
            self.problems.append("nested repeats: a repeated group ends (or starts) with a repeat of characters "
                                 "that can also start (or end) it, e.g. (a+)+ (write a+)")
        if high == 0:
            return _RedosInfo()
        if possessive:
            return _RedosInfo(body.first, body.last, body.chars, 0, 0, low == 0 or body.nullable)
        varying = high > low
        return _RedosInfo(body.first, body.last, body.chars,
                          body.heads | (body.first if varying else 0), body.tails | (body.last if varying else 0),
                          low == 0 or body.nullable)


def _children(name: str, av: Any) -> list:
    """The sub-pattern lists under one parse-tree node."""
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return [av[2]]
    if name == "SUBPATTERN":
        return [av[-1]]
    if name == "ATOMIC_GROUP":
        return [av]
    if name == "BRANCH":
        return list(av[1])
    if name == "GROUPREF_EXISTS":
        return [av[1]] + ([av[2]] if av[2] else [])
    if name in ("ASSERT", "ASSERT_NOT"):
        return [av[1]]
    return []


def _item_accepts(op: str, av: Any, char: str) -> bool:
    """Whether one item of a character class ``[...]`` accepts ``char`` (unknown items accept all)."""
    code = ord(char)
    if op == "LITERAL":
        return code == av
    if op == "RANGE":
        return av[0] <= code <= av[1]
    if op == "CATEGORY":
        kind = str(av)
        if "DIGIT" in kind:
            hit = char.isdecimal()
        elif "SPACE" in kind:
            hit = char.isspace()
        elif "WORD" in kind:
            hit = char.isalnum() or char == "_"
        elif "LINEBREAK" in kind:
            hit = char in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
        else:
            return True
        return hit != ("NOT_" in kind)
    return True


def redos_problem(pattern: str) -> str:
    """Why ``pattern`` can backtrack catastrophically ('' when it cannot); never raises.

    A pattern ``re`` cannot compile is left to ``re.compile``'s own error ('' here).
    """
    try:
        tree = _parse(pattern)
    except Exception:  # noqa: BLE001 - re.compile reports invalid patterns
        return ""
    try:
        checker = _RedosChecker(tree)
        checker.sequence(tree, False)
    except RecursionError:
        return "nested too deeply to check"
    except Exception:  # noqa: BLE001 - a tree shape this check does not know: left to the length cap
        return ""
    return checker.problems[0] if checker.problems else ""
