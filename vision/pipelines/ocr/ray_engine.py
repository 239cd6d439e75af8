"""Documents on Ray Data: ``vision ocr --engine ray`` for corpora beyond one process or one machine.

With GPUs::

    from_items(documents)              one row per document (its index and the pickled input item)
      -> flat_map(read_rows)           tasks of 1 CPU: the caller's ``read(item)`` (decode, render PDFs); one
                                       row per page (the pickled PageImage, text layer included, and the
                                       document's page count), an "end" row for a document of no pages, or
                                       one "error" row
      -> map_batches(PageOCRActor)     ActorPoolStrategy, one GPU per actor, one actor per GPU; each actor
                                       builds its predictor once (factory) and returns each page's JSON
                                       (no image)
      -> iter_rows() on the driver     pages gathered per document; once all its pages are in:
                                       ``finish(item, document)`` (the CLI writes the output atomically)

On CPU-only clusters the models take every core, as in the local engine, and a page's trip through the
object store costs more than reading it where it is read: ``map_batches(DocOCRActor)`` over the document
rows, one actor per node holding all its CPUs, each reading its batch of documents in a thread while its
models run (``predictor.map``) and returning each document's JSON, or its error (:func:`plan_resources`).

As for video (:mod:`vision.pipelines.video.ray_engine`), writing on the driver keeps the pipeline streaming (no
group-by barrier: results and progress arrive per document) and only the inputs must be readable by every
node. A document that cannot be read, or whose pages fail in the models, is reported and the run goes on;
``--resume`` is the caller's (inputs whose output exists are not submitted).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from vision.errors import VisionError
from vision.pipelines._ray_rows import complete_groups
from vision.structures import Document

__all__ = ["DocOCRActor", "PageOCRActor", "plan_resources", "read_rows", "run_ray"]


def _row(doc: int, kind: str, *, pos: int = -1, page: bytes = b"", count: int = 0, message: str = "") -> dict:
    """Every row has the same columns (Arrow needs one schema); ``kind`` says which ones matter."""
    return {"doc": doc, "kind": kind, "pos": pos, "page": page, "count": count, "message": message}


def describe(item: Any, exc: BaseException) -> str:
    """A one-line reason naming the input."""
    if isinstance(exc, VisionError):
        return str(exc)
    return f"{getattr(item, 'source', item)}: {type(exc).__name__}: {exc}"


def read_rows(row: dict[str, Any], read: Callable[[Any], Any]) -> Iterator[dict[str, Any]]:
    """Ray ``flat_map`` body: one document's pages as rows, each holding the page count, so an actor's batch
    of N rows is N pages (an ``end`` row for a document of no pages; one ``error`` row for a failure)."""
    doc = int(row["doc"])
    item = pickle.loads(row["item"])
    try:
        pages = list(read(item))
    except Exception as exc:  # noqa: BLE001 - a damaged or refused input becomes a row the driver reports
        yield _row(doc, "error", message=describe(item, exc))
        return
    for pos, page in enumerate(pages):
        yield _row(doc, "page", pos=pos, page=pickle.dumps(page, protocol=pickle.HIGHEST_PROTOCOL), count=len(pages))
    if not pages:
        yield _row(doc, "end")


class PageOCRActor:
    """Ray actor: builds the predictor once, then OCRs the page rows of each batch (other rows pass).

    ``threads``: torch's (and so onnxruntime's) threads in the actor; Ray sets one per CPU the actor holds."""

    def __init__(self, factory: Callable[[], Callable], threads: int | None = None) -> None:
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.predictor = factory()

    def _pages(self, pages: list[Any]) -> list[Any]:
        """The OCR'd pages of ``pages`` (one call), or per page with failures as exceptions."""
        try:
            return list(self.predictor(pages).pages)
        except Exception:  # noqa: BLE001 - find the page(s) at fault; the others are still read
            out: list[Any] = []
            for page in pages:
                try:
                    out.append(self.predictor([page]).pages[0])
                except Exception as exc:  # noqa: BLE001
                    out.append(exc)
            return out

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        kinds = [str(k) for k in batch["kind"]]
        rows = [i for i, kind in enumerate(kinds) if kind == "page"]
        pages = [pickle.loads(batch["page"][i]) for i in rows]
        done = self._pages(pages) if pages else []
        result = np.full(len(kinds), "", dtype=object)
        kind = np.array(kinds, dtype=object)
        message = np.array([str(m) for m in batch["message"]], dtype=object)
        for i, source, page in zip(rows, pages, done):
            if isinstance(page, BaseException):
                kind[i], message[i] = "error", describe(source, page)
                continue
            page.image = None  # the page stays here; only its OCR travels on
            result[i] = Document(pages=[page]).to_json()
        kept = {k: v for k, v in batch.items() if k not in ("page", "kind", "message")}
        return {**kept, "kind": kind, "message": message, "result": result}


class DocOCRActor:
    """Ray actor for CPU-only nodes: builds the predictor once, then reads and OCRs each batch's documents
    (``predictor.map``: reading in a thread while the models run) and returns each one's JSON or error."""

    def __init__(self, factory: Callable[[], Any], read: Callable[[Any], Any], threads: int | None = None) -> None:
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.predictor, self.read = factory(), read

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        items = [pickle.loads(b) for b in batch["item"]]
        kind = np.full(len(items), "doc", dtype=object)
        message = np.full(len(items), "", dtype=object)
        result = np.full(len(items), "", dtype=object)
        for i, (item, doc) in enumerate(zip(items, self.predictor.map(items, read=self.read, errors="return"))):
            if isinstance(doc, BaseException):
                kind[i], message[i] = "error", describe(item, doc)
                continue
            for page in doc.pages:
                page.image = None  # only the OCR travels on
            result[i] = doc.to_json()
        count = np.zeros(len(items), dtype=np.int64)  # a whole document: complete with no part rows
        return {"doc": batch["doc"], "kind": kind, "message": message, "result": result, "count": count}


def plan_resources(cluster: dict[str, float], node_cpus: Sequence[float], workers: int | None
                   ) -> tuple[dict[str, float], int, float | None, int | None]:
    """``(actor resources, actors, CPUs per read task, threads per actor)`` for a cluster.

    With GPUs: one GPU per actor, one actor per GPU (or ``workers``), read tasks of one CPU. CPU only, where
    the models take every core (as in the local engine): one actor per node holding all its CPUs, its
    models on as many threads as the node has cores, reading its documents itself (read tasks ``None``:
    :class:`DocOCRActor`); ``workers`` given on a CPU cluster: that many actors of one CPU and one thread.
    """
    gpus = int(cluster.get("GPU", 0))
    if gpus >= 1:
        return {"num_gpus": 1.0}, workers or gpus, 1.0, None
    if workers:
        return {"num_cpus": 1.0}, workers, None, 1
    cores = min(node_cpus) if node_cpus else float(cluster.get("CPU", 1))
    return {"num_cpus": max(1.0, cores)}, max(1, len(node_cpus)), None, max(1, int(cores))


def _resources(ray: Any, workers: int | None) -> tuple[dict[str, float], int, float, int | None]:
    nodes = [float(n["Resources"].get("CPU", 0)) for n in ray.nodes() if n.get("Alive")]
    return plan_resources(ray.cluster_resources(), [c for c in nodes if c > 0], workers)


def run_ray(
    items: Sequence[Any],
    *,
    read: Callable[[Any], Any],
    factory: Callable[[], Callable],
    finish: Callable[[Any, Document], Any],
    workers: int | None = None,
    pages_per_batch: int = 16,
    address: str | None = None,
    progress: bool = True,
    init_kwargs: dict[str, Any] | None = None,
) -> Iterator[tuple[Any, str | None]]:
    """OCR ``items`` on Ray; yields ``(item, error message or None)`` per document as it is finished.

    Args:
        items: the inputs (picklable), each read by ``read(item) -> pages`` in a Ray task.
        read, factory, finish: picklable callables: pages of an item; the predictor (built once per actor);
            what to do with a finished document (run on the driver; e.g. write it atomically).
        workers: OCR actors (default: one per GPU of the cluster, else one per node: :func:`plan_resources`).
        pages_per_batch: pages per actor call (on CPU-only clusters: documents per actor call).
        address: cluster to join when Ray is not initialised yet (``None``: ``RAY_ADDRESS`` or a local one).
        progress: Ray Data's progress bars.
        init_kwargs: more ``ray.init`` arguments (``num_cpus`` for a local instance).
    """
    import ray
    import ray.data

    if not items:
        return
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, **(init_kwargs or {}))
    try:
        ray.data.DataContext.get_current().enable_progress_bars = progress
        resources, actors, read_cpus, threads = _resources(ray, workers)
        rows = [{"doc": i, "item": pickle.dumps(item)} for i, item in enumerate(items)]
        if read_cpus is None:  # CPU-only: the actors read their documents themselves, one block per call
            ds = ray.data.from_items(rows, override_num_blocks=-(-len(rows) // pages_per_batch))
            # whole blocks as batches: a row target would bundle blocks into one task (Ray splits the rows
            # evenly, so blocks are at most pages_per_batch), holding every result back until the task ends
            actor, kwargs, batch = DocOCRActor, {"factory": factory, "read": read, "threads": threads}, None
        else:  # a block per document: each read task reads one
            ds = ray.data.from_items(rows, override_num_blocks=len(rows))
            ds = ds.flat_map(read_rows, fn_kwargs={"read": read}, num_cpus=read_cpus)
            actor, kwargs, batch = PageOCRActor, {"factory": factory, "threads": threads}, pages_per_batch
        ds = ds.map_batches(actor, fn_constructor_kwargs=kwargs, batch_size=batch, batch_format="numpy",
                            compute=ray.data.ActorPoolStrategy(size=actors), **resources)
        yield from _gather(ds.iter_rows(), items, finish)
    finally:
        if started:
            ray.shutdown()


def _gather(rows: Any, items: Sequence[Any], finish: Callable[[Any, Document], Any]) -> Iterator[tuple[Any, str | None]]:
    """Collect each document's pages; finish a document once its page count and all its pages are in."""
    closed: set[int] = set()
    for doc, parts, end in complete_groups(rows, key=lambda row: int(row["doc"]), part="page", count="count"):
        closed.add(doc)
        if parts is None:
            yield items[doc], str(end["message"])
            continue
        if str(end["kind"]) == "doc":  # read and OCR'd whole by a DocOCRActor
            document = Document.from_json(end["result"])
        else:
            ordered = [Document.from_json(r["result"]).pages[0]
                       for r in sorted(parts, key=lambda r: int(r["pos"]))]
            document = Document(pages=ordered, source=ordered[0].source if ordered else None)
        try:
            finish(items[doc], document)
        except Exception as exc:  # noqa: BLE001 - e.g. the output folder cannot be written
            yield items[doc], describe(items[doc], exc)
            continue
        yield items[doc], None
    for doc in sorted(set(range(len(items))) - closed):  # only when Ray lost rows: never a partial document
        yield items[doc], describe(items[doc], VisionError(None, "the Ray pipeline ended before all pages arrived"))
