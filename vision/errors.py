"""Errors raised on bad input. Every reader failure is a `VisionError` whose message names the source."""

from __future__ import annotations

__all__ = [
    "VisionError",
    "UnsupportedFormat",
    "CorruptFile",
    "PasswordRequired",
    "LimitExceeded",
    "UnreadableFile",
    "WeightsError",
    "InvalidPages",
]


class VisionError(Exception):
    """Base class: a clear, user-facing failure (never a raw library traceback)."""

    def __init__(self, source: str | None, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}" if source else reason)

    def __reduce__(self) -> tuple[type, tuple[str | None, str]]:
        """Pickle with the constructor's arguments, so errors cross process boundaries (worker pools, Ray)."""
        return type(self), (self.source, self.reason)


class UnsupportedFormat(VisionError):
    """The bytes are not a format we read (or the extension lies about them)."""


class CorruptFile(VisionError):
    """The format is known but the data is truncated or damaged."""


class PasswordRequired(VisionError):
    """An encrypted document needs a (correct) password."""


class LimitExceeded(VisionError):
    """A configured limit (bytes, pixels, pages, frames) was exceeded."""


class UnreadableFile(VisionError):
    """The file does not exist, is a directory, or cannot be opened (permissions, I/O error)."""


class WeightsError(VisionError):
    """Model weights are missing, do not match their checksum, or do not fit the architecture."""


class InvalidPages(VisionError, ValueError):
    """A page selection names pages the document does not have (or none at all)."""
