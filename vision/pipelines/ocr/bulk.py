"""The bulk OCR engine behind :meth:`OCRPredictor.map` and ``vision ocr``: many documents, streamed in order.

Host work and model work are separated:

* **read** (decode images, render PDF pages) runs in ``workers`` processes (``spawn``), ``ahead`` documents
  at a time; inputs that are already objects (a ``DocumentFile``, ``PageImage`` objects, arrays) are read by
  a thread of this process;
* **models** (the stages up to ``recognize``: text layer, detection, crops, recognition) run in this process,
  on batches of ``pages_per_batch`` pages taken across documents, so a GPU gets full batches whatever the
  pages per file;
* **post** (the stages after ``recognize``: script check, layout, structure), the :class:`Document` and the
  caller's ``finish(item, document)`` (render a format, write a file) run in the worker processes when
  there are any (``post="workers"``, the default with workers), else here.

Results come back in input order, one per input, as soon as they and every one before them are done; at most
``ahead`` documents are read, run or finished at once, which bounds memory (a document is read whole: its
pages are bounded by the reader's ``Limits.max_pages``). A document that fails (damaged, over a limit, a
failing ``finish``) gives its exception in its place (``errors="return"``) or raises there (``"raise"``),
and the run goes on with the next one.
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import pickle
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from vision.io.page import PageImage
from vision.pipelines.base import PageState, Pipeline, as_pages
from vision.structures import Document

__all__ = ["bulk_map", "default_ahead", "read_path", "split_pipeline"]

_WORKER: dict[str, Any] = {}


def read_path(item: Any) -> list[PageImage]:
    """The default reader: a file path (``str``/``Path``) or a URI (``s3://...``, :mod:`vision.io.remote`) of
    an image or a PDF (150 dpi, default limits) -> pages."""
    from vision.io import DocumentFile
    from vision.io.remote import is_uri, read_uri

    source: Any = str(item)
    if is_uri(item):
        from vision.settings import Limits

        source = io.BytesIO(read_uri(item, Limits().max_bytes))
        source.name = item  # messages name the URI
    with DocumentFile.from_path(source) as doc:
        return list(doc)


def default_ahead(workers: int, pages_per_batch: int) -> int:
    """Documents in flight by default: enough one-page documents to fill a model batch while ``workers``
    read the next ones."""
    return max(4, 2 * workers, pages_per_batch + workers)


def split_pipeline(
    pipeline: Pipeline, last_model_stage: str | None = None
) -> tuple[Pipeline, Pipeline | None]:
    """``pipeline`` cut after ``last_model_stage`` (``None``: ``curved`` when there is one, which reads crops
    again, else ``recognize``): the model part and the host part (``None`` when empty)."""
    names = pipeline.names
    last_model_stage = last_model_stage or ("curved" if "curved" in names else "recognize")
    if last_model_stage not in names:
        return pipeline, None
    cut = names.index(last_model_stage) + 1
    model = Pipeline([(n, pipeline[n]) for n in names[:cut]])
    post = Pipeline([(n, pipeline[n]) for n in names[cut:]]) if cut < len(names) else None
    return model, post


def _init_worker(read: Callable | None, post: Pipeline | None, finish: Callable | None, threads: int) -> None:
    """Worker start: a few CPU threads (the models' process owns the rest), the reader, post stages, finish."""
    import cv2

    cv2.setNumThreads(threads)
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    _WORKER.update(read=read, post=post, finish=finish)


def _write_setup(*args: Any) -> str:
    """Pickle the workers' start-up arguments to a private temporary file; returns its path.

    Given as ``initargs``, a large argument (the script stage's lexicon is ~1 MB) would block the spawning
    process on the pipe until each child has imported torch and read it, which starts the workers one after
    the other (3 s each on a 16-core host); a path fits in the pipe, so they start in parallel.
    """
    fd, path = tempfile.mkstemp(prefix="vision-bulk-", suffix=".pickle")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(args, f, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _init_worker_from(path: str) -> None:
    """Worker start from :func:`_write_setup`'s file."""
    with open(path, "rb") as f:
        _init_worker(*pickle.load(f))


def _read_task(item: Any) -> list[PageImage]:
    return list(_WORKER["read"](item))


def _finish(post: Pipeline | None, finish: Callable | None, item: Any, states: list[Any], source: str | None) -> Any:
    pages = post(states) if post is not None else states
    doc = Document(pages=pages, source=source)
    return finish(item, doc) if finish is not None else doc


def _finish_task(item: Any, states: list[Any], source: str | None) -> Any:
    return _finish(_WORKER["post"], _WORKER["finish"], item, states, source)


@dataclass
class _Doc:
    """One input on its way: read, its pages through the models, then finished."""

    index: int
    item: Any
    source: str | None
    read: Future | None = None
    pages: int = 0
    states: list[Any] = field(default_factory=list)
    left: int = 0
    error: BaseException | None = None
    result: Future | None = None


def _source(item: Any) -> str | None:
    """The document's name: a path input's, else the input's ``source`` attribute (a job's, a ``DocumentFile``'s)."""
    source = item if isinstance(item, (str, os.PathLike)) else getattr(item, "source", None)
    return None if source is None else str(source)


def _is_path(item: Any) -> bool:
    return isinstance(item, (str, Path)) or (isinstance(item, os.PathLike) and not hasattr(item, "__iter__"))


def _done(value: Any) -> Future:
    f: Future = Future()
    if isinstance(value, BaseException):
        f.set_exception(value)
    else:
        f.set_result(value)
    return f


def bulk_map(
    predictor: Any,
    inputs: Iterable[Any],
    *,
    workers: int = 0,
    read: Callable[[Any], Iterable[PageImage]] | None = None,
    finish: Callable[[Any, Document], Any] | None = None,
    ahead: int | None = None,
    post: Literal["main", "workers"] | None = None,
    errors: Literal["raise", "return"] = "raise",
    worker_threads: int = 1,
) -> Iterator[Any]:
    """OCR every input of ``inputs``; yields one result per input, in order (see the module docstring).

    Args:
        predictor: an :class:`~vision.pipelines.ocr.predictor.OCRPredictor`.
        inputs: file paths or URIs, ``DocumentFile`` objects, ``PageImage`` lists, numpy pages or lists of
            them.
        workers: host processes (0: everything in this process, reading in a thread).
        read: ``item -> pages``, run in the workers (a picklable callable) for every input; default
            :func:`read_path` for path inputs (other inputs are read here).
        finish: ``(item, document) -> result`` run after the post stages (in the workers when there are any:
            a module-level function); the result is yielded instead of the document.
        ahead: documents in flight at once (default :func:`default_ahead`).
        post: where the post stages and ``finish`` run (default: ``"workers"`` when there are workers).
        errors: ``"raise"`` re-raises a document's exception at its place; ``"return"`` yields it.
        worker_threads: CPU threads of each worker (OpenCV, torch).
    """
    custom_read, read = read is not None, read or read_path
    model, rest = split_pipeline(predictor.pipeline)
    in_workers = workers > 0 and (post or "workers") == "workers"
    size = predictor.options.pages_per_batch
    ahead = max(1, ahead or default_ahead(workers, size))
    procs: Executor | None = None
    setup = None
    if workers > 0:
        setup = _write_setup(read, rest if in_workers else None, finish if in_workers else None, worker_threads)
        procs = ProcessPoolExecutor(
            workers, mp_context=mp.get_context("spawn"), initializer=_init_worker_from, initargs=(setup,))
    local = ThreadPoolExecutor(1, thread_name_prefix="vision-read")
    todo = iter(enumerate(inputs))
    flight: deque[_Doc] = deque()  # every document not yielded yet, in input order
    queue: deque[tuple[_Doc, PageImage]] = deque()  # pages read, waiting for the models
    exhausted = False

    def submit_read() -> bool:
        nonlocal exhausted
        if exhausted:
            return False
        try:
            index, item = next(todo)
        except StopIteration:
            exhausted = True
            return False
        doc = _Doc(index, item, _source(item))
        if custom_read or _is_path(item):
            doc.read = procs.submit(_read_task, item) if procs is not None else local.submit(lambda: list(read(item)))
        else:
            doc.read = local.submit(lambda: list(as_pages(item)))
        flight.append(doc)
        return True

    def finished(doc: _Doc) -> None:
        if doc.error is not None:
            doc.result = _done(doc.error)
        elif in_workers:
            doc.result = procs.submit(_finish_task, doc.item, doc.states, doc.source)  # type: ignore[union-attr]
        else:
            try:
                doc.result = _done(_finish(rest, finish, doc.item, doc.states, doc.source))
            except Exception as exc:  # noqa: BLE001 - reported in the document's place
                doc.result = _done(exc)

    def run_models(batch: list[tuple[_Doc, PageImage]]) -> None:
        try:
            states = model([page for _, page in batch])
        except Exception as exc:  # noqa: BLE001 - every document of the batch fails, the run goes on
            states = [exc] * len(batch)
        for (doc, _), state in zip(batch, states):
            if isinstance(state, BaseException):
                doc.error = doc.error or state
            else:
                if isinstance(state, PageState):
                    state.device_image, state.crops = None, None
                doc.states.append(state)
            doc.left -= 1
            if doc.left == 0:
                finished(doc)

    try:
        while len(flight) < ahead and submit_read():
            pass
        cursor = 0  # flight[cursor:] are documents whose pages have not been queued yet
        while flight:
            # queue the pages of the next document read (in order), then run full batches
            if cursor < len(flight):
                doc = flight[cursor]
                cursor += 1
                try:
                    pages = doc.read.result()  # type: ignore[union-attr]
                except Exception as exc:  # noqa: BLE001 - a damaged or refused input
                    pages, doc.error = [], exc
                doc.read, doc.left = None, len(pages)
                if not pages:
                    finished(doc)
                queue.extend((doc, p) for p in pages)
            while len(queue) >= size or (queue and cursor == len(flight)):
                run_models([queue.popleft() for _ in range(min(size, len(queue)))])
            # hand back the finished documents at the head, in order
            while flight and flight[0].result is not None and (flight[0].result.done() or cursor == len(flight)
                                                                   or len(flight) >= ahead):
                doc = flight.popleft()
                cursor -= 1
                try:
                    value = doc.result.result()
                except Exception as exc:
                    if errors == "raise":
                        raise
                    value = exc
                submit_read()
                yield value
            while len(flight) < ahead and submit_read():
                pass
    finally:
        local.shutdown(wait=False, cancel_futures=True)
        if procs is not None:
            procs.shutdown(wait=True, cancel_futures=True)
        if setup is not None:
            os.unlink(setup)
