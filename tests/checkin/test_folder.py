"""FolderPublisher: the terminal's fallback writes the project and its README into one folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.errors import CheckInError
from agents.types import RunStatus
from bot.checkin import FolderPublisher
from tests.checkin.support import FAILING, publication


async def test_writes_nested_files_and_the_readme(tmp_path: Path) -> None:
    files = {"src/pkg/mod.py": "X = 1\n", "src/pkg/__init__.py": "", "tests/test_mod.py": "def test(): pass\n"}

    result = await FolderPublisher(tmp_path / "out").publish(publication(files))

    out = tmp_path / "out"
    assert result.kind == "folder"
    assert result.location == str(out.resolve())
    assert (out / "src" / "pkg" / "mod.py").read_text() == "X = 1\n"
    assert (out / "src" / "pkg" / "__init__.py").read_text() == ""  # empty files are fine on a disk
    assert (out / "tests" / "test_mod.py").exists()
    assert (out / "README.md").read_text().startswith("# Adder")
    assert result.note == ""


async def test_refuses_paths_that_escape_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(tmp_path)  # a symlink already inside the folder, pointing out of it
    files = {"../evil.py": "x", "/etc/evil.py": "x", "link/evil.py": "x", "ok.py": "ok = 1\n"}

    result = await FolderPublisher(out).publish(publication(files))

    assert not (tmp_path / "evil.py").exists()  # where both "../" and the symlink would have put it
    assert not (out / "etc").exists()
    assert (out / "ok.py").exists()
    assert "../evil.py" in result.note and "/etc/evil.py" in result.note and "link/evil.py" in result.note
    assert "`../evil.py`: file path '../evil.py' must be relative and stay inside the project" in (out / "README.md").read_text()


async def test_binary_content_is_written_back_byte_for_byte(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\xff"
    files = {"logo.png": png.decode("utf-8", errors="surrogateescape"), "odd.txt": "\ud800"}

    result = await FolderPublisher(tmp_path).publish(publication(files))

    assert (tmp_path / "logo.png").read_bytes() == png
    assert not (tmp_path / "odd.txt").exists()
    assert "odd.txt (not text that can be saved" in result.note


async def test_a_readme_among_the_files_keeps_its_content_under_another_name(tmp_path: Path) -> None:
    await FolderPublisher(tmp_path).publish(publication({"README.md": "the programmer's readme\n"}))

    assert (tmp_path / "README-2.md").read_text() == "the programmer's readme\n"
    assert (tmp_path / "README.md").read_text().startswith("# Adder")


async def test_a_failing_run_is_marked_in_the_readme(tmp_path: Path) -> None:
    await FolderPublisher(tmp_path).publish(publication(status=RunStatus.FAILED, report=FAILING))

    assert (tmp_path / "README.md").read_text().startswith("> **Status: FAILING TESTS**")


async def test_an_unwritable_folder_is_a_check_in_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")

    with pytest.raises(CheckInError, match="Could not write the files to"):
        await FolderPublisher(blocker / "out").publish(publication())

    assert blocker.read_text() == "not a folder"
