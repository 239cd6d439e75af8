"""URI inputs (``vision.io.remote``) on ``file://`` URIs: what object stores get through the same pyarrow
filesystem interface, without a network."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.errors import LimitExceeded, UnreadableFile
from vision.io.remote import is_uri, list_uri, read_uri

SUFFIXES = {".png", ".pdf"}


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    for name, data in (("a.png", b"A"), ("b.PDF", b"BB"), ("notes.txt", b"x"), ("sub/c.png", b"CCC")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return tmp_path


def test_only_strings_with_a_scheme_are_uris() -> None:
    assert is_uri("s3://bucket/scans/") and is_uri("file:///data/a.png") and is_uri("gs://b/x.pdf")
    assert not any(is_uri(name) for name in ("-", "scans/a.png", "C:/scans", Path("s3:/b")))


def test_a_folder_lists_its_documents_by_name_as_a_local_folder_does(tree: Path) -> None:
    found, problems = list_uri(tree.as_uri() + "/", SUFFIXES, recursive=False)
    assert problems == []
    assert found == [(f"{tree.as_uri()}/a.png", Path("a.png")), (f"{tree.as_uri()}/b.PDF", Path("b.PDF"))]
    deep, _ = list_uri(tree.as_uri(), SUFFIXES, recursive=True)
    assert [rel for _, rel in deep] == [Path("a.png"), Path("b.PDF"), Path("sub/c.png")]
    assert [read_uri(uri, 10) for uri, _ in deep] == [b"A", b"BB", b"CCC"]


def test_names_that_uris_escape_are_listed_escaped_and_read(tmp_path: Path) -> None:
    folder = tmp_path / "in dir"
    folder.mkdir()
    (folder / "a b%.png").write_bytes(b"data")
    found, problems = list_uri(folder.as_uri(), SUFFIXES, recursive=False)
    assert problems == [] and found == [(f"{folder.as_uri()}/a%20b%25.png", Path("a b%.png"))]
    assert read_uri(found[0][0], 10) == b"data"


def test_a_named_file_is_taken_whatever_its_suffix(tree: Path) -> None:
    uri = (tree / "notes.txt").as_uri()
    assert list_uri(uri, SUFFIXES, recursive=False) == ([(uri, Path("notes.txt"))], [])


def test_missing_unknown_and_oversized_inputs_give_clear_errors(tree: Path) -> None:
    gone = f"{tree.as_uri()}/gone/"
    assert list_uri(gone, SUFFIXES, False) == ([], [f"{gone}: no such file or folder"])
    found, problems = list_uri("nosuchscheme://bucket/x", SUFFIXES, False)
    assert found == [] and problems and problems[0].startswith("nosuchscheme://bucket/x: ")
    with pytest.raises(LimitExceeded, match="over the limit of 2 bytes"):
        read_uri((tree / "sub/c.png").as_uri(), 2)
    with pytest.raises(UnreadableFile, match="cannot read it"):
        read_uri(f"{tree.as_uri()}/gone.png", 10)
    with pytest.raises(UnreadableFile, match="cannot read it"):
        read_uri(tree.as_uri(), 10)  # a folder
