"""Prometheus metrics: requests, latencies, batch sizes, queue depth and jobs, on a per-app registry.

A registry per app (not the process-global one) lets tests build many apps in one process. With
``vision serve --workers N`` each worker process exposes its own series at ``/metrics``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Metrics", "MetricsMiddleware"]

# Latency buckets span a 5 ms health check to a 2-minute synchronous PDF request.
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)


class _JobsCollector(Collector):
    """Reads job counts per status from the job store at scrape time (no bookkeeping to drift)."""

    def __init__(self, counts: Callable[[], Mapping[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily("vision_jobs", "Jobs in the store by status", labels=["status"])
        for status, count in sorted(self._counts().items()):
            family.add_metric([status], count)
        yield family


class Metrics:
    """The service's metric families, registered on their own :class:`CollectorRegistry`."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "vision_http_requests",
            "HTTP requests by route and status code",
            ["method", "route", "status"],
            registry=r,
        )
        self.latency = Histogram(
            "vision_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.batch_items = Histogram(
            "vision_batch_pages", "Pages per model batch", buckets=_BATCH_BUCKETS, registry=r
        )
        self.batch_requests = Histogram(
            "vision_batch_requests",
            "Requests merged into one model batch",
            buckets=_BATCH_BUCKETS,
            registry=r,
        )
        self.batch_seconds = Histogram(
            "vision_batch_duration_seconds", "Model time per batch", buckets=_LATENCY_BUCKETS, registry=r
        )
        self.queue_depth = Gauge("vision_queue_depth", "Pages waiting for the model", registry=r)
        self.models_loaded = Gauge("vision_models_loaded", "1 once the predictors are built", registry=r)

    def observe_batch(self, items: int, requests: int, seconds: float) -> None:
        """Record one model call of ``items`` pages merged from ``requests`` requests."""
        self.batch_items.observe(items)
        self.batch_requests.observe(requests)
        self.batch_seconds.observe(seconds)

    def set_queue_depth(self, items: int) -> None:
        """Record how many pages wait for the model."""
        self.queue_depth.set(items)

    def watch_jobs(self, counts: Callable[[], Mapping[str, int]]) -> None:
        """Expose ``vision_jobs{status}`` from ``counts()`` at each scrape."""
        self.registry.register(_JobsCollector(counts))

    def render(self) -> bytes:
        """The exposition text served at ``/metrics``."""
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Pure ASGI middleware counting requests and timing them, labelled by route template."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        start = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = _route_label(scope)
            self.metrics.requests.labels(scope["method"], route, str(status)).inc()
            self.metrics.latency.labels(scope["method"], route).observe(time.perf_counter() - start)


def _route_label(scope: Scope) -> str:
    """The matched route's template (``/v1/jobs/{job_id}``), so label values stay few."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if path is None:
        return "unmatched"
    return f"{scope.get('root_path', '')}{path}"  # mounted apps (the UI at /ui) keep their prefix
