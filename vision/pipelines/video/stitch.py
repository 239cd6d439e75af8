"""Lines wider than the frame (tickers, lines cut by a pan) assembled from the pieces read on each frame.

A reading cut by the left or right frame edge is a window on a longer line. Two windows of one line overlap:
the end of the earlier one is the start of the later one (text moving left, or a camera panning right), or
the other way round. :func:`join` locates one window's start (or end) in the other with rapidfuzz's
alignment (``partial_ratio`` >= 90 on case-folded text) and returns the union. A word cut by the frame edge
is read partly or wrongly: :func:`trim_cut` drops it before joining.
"""

from __future__ import annotations

from rapidfuzz import fuzz

__all__ = ["extend", "join", "trim_cut"]

MIN_OVERLAP = 6  # characters: shorter overlaps match by chance (a common word plus a space)
ANCHOR = 16  # characters of a reading's start (or end) looked up in the line: about three words


def _find(piece: str, text: str) -> tuple[float, int, int]:
    """Where ``piece`` best matches inside ``text``: ``(score, start, end)`` (rapidfuzz alignment)."""
    found = fuzz.partial_ratio_alignment(piece.casefold(), text.casefold())
    if found is None or len(piece) > len(text):
        return 0.0, 0, 0
    return float(found.score), int(found.dest_start), int(found.dest_end)


def join(line: str, reading: str, min_score: float = 90.0) -> str | None:
    """The ``line`` assembled so far extended by a later ``reading`` (a window on it), or ``None`` when the
    reading does not overlap it.

    The reading's first ``ANCHOR`` characters are looked up in the line: found, the line continues with the
    reading from there (the overlap as the later reading has it: the earlier one had it at its cut edge).
    Else its last characters: found, the reading extends the line to the left. Readings inside the line leave
    it as it is.
    """
    if not reading:
        return line
    k = min(len(reading), ANCHOR)
    score, start, _ = _find(reading[:k], line)
    if score >= min_score and k >= MIN_OVERLAP:
        return line[:start] + reading if start + len(reading) >= len(line) else line
    score, _, end = _find(reading[-k:], line)
    if score >= min_score and k >= MIN_OVERLAP:
        return reading + line[end:] if end <= len(reading) else line
    if (n := _exact_overlap(line, reading)) > 0:  # overlaps shorter than an anchor
        return line[: len(line) - n] + reading
    if (n := _exact_overlap(reading, line)) > 0:
        return reading + line[n:]
    return None


def _exact_overlap(a: str, b: str) -> int:
    """The longest suffix of ``a`` equal to a prefix of ``b`` (case-folded), ``MIN_OVERLAP`` or more long."""
    fa, fb = a.casefold(), b.casefold()
    for n in range(min(len(fa), len(fb)), MIN_OVERLAP - 1, -1):
        if fa[-n:] == fb[:n]:
            return n
    return 0


def trim_cut(text: str, left: bool, right: bool) -> str:
    """``text`` without its first word when cut by the left edge and its last when cut by the right one
    (kept whole when that would leave nothing)."""
    words = text.split()
    kept = words[int(left) : len(words) - int(right)]
    return " ".join(kept) if kept else text


def extend(line: str, reading: str) -> str:
    """:func:`join`, or the longer of the two when they do not overlap (the first windows of a line entering
    the frame are too short to overlap anything: the line starts over from the longer one)."""
    joined = join(line, reading)
    return joined if joined is not None else max(line, reading, key=len)
