"""uvicorn's h11 protocol with a deadline for request headers, so slow clients cannot hold connections.

uvicorn drops idle keep-alive connections but waits forever for a request whose headers trickle in one
byte at a time. :class:`GuardedH11Protocol` closes a connection that has not completed a request's
headers within ``HEADER_TIMEOUT_S`` (bodies have their own timeout in
:class:`~vision.app.api.security.SecurityMiddleware`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_TIMEOUT_S", "GuardedH11Protocol"]

HEADER_TIMEOUT_S = 10.0


class GuardedH11Protocol(H11Protocol):
    """Closes connections that sit for ``HEADER_TIMEOUT_S`` without a request in progress."""

    header_timeout_s = HEADER_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(None)

    def _arm(self, cycle: Any) -> None:
        self._guard = self.loop.call_later(self.header_timeout_s, self._check, cycle)

    def _check(self, cycle_at_arming: Any) -> None:
        """Close the connection unless a request started since the timer was armed or is running now."""
        if self.transport.is_closing():
            return
        cycle = self.cycle
        waiting = cycle is cycle_at_arming and (cycle is None or cycle.response_complete)
        if waiting:
            self.transport.close()
            return
        self._arm(cycle)

    def connection_lost(self, exc: Exception | None) -> None:
        guard = getattr(self, "_guard", None)
        if guard is not None:
            guard.cancel()
        super().connection_lost(exc)
