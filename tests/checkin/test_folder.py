"""FolderPublisher: the terminal's fallback writes the project and its README into one folder."""

from __future__ import annotations

import os
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


# -- best effort per file, and nothing followed on the way ------------------------------------------

def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("files, lost, why, lost_count", [
    ({"pkg": "a file\n", "pkg/mod.py": "X = 1\n", "ok.py": "ok\n"}, "pkg/mod.py", "pkg is a file, not a folder", 1),
    ({"pkg/mod.py": "X = 1\n", "pkg": "a file\n", "ok.py": "ok\n"}, "pkg", "a folder of that name is in the way", 1),
    ({"a/b/c.py": "1\n", "a/b": "2\n", "a": "3\n", "ok.py": "ok\n"}, "a/b", "a folder of that name is in the way", 2),
    ({"d/" * 2500 + "x.py": "deep\n", "ok.py": "ok\n"}, "d/d/d/", "too long", 1),
    ({"n" * 300 + ".py": "long name\n", "ok.py": "ok\n"}, "nnnn", "longer than 255 bytes", 1),
])
async def test_a_file_that_cannot_be_written_is_named_and_the_rest_are_written(tmp_path: Path, files, lost, why,
                                                                               lost_count):
    result = await FolderPublisher(tmp_path).publish(publication(files))

    written = tree(tmp_path)
    assert written["ok.py"] == "ok\n" and written["README.md"].startswith("# Adder")
    assert lost in result.note and why in result.note
    assert len(written) == len(files) - lost_count + 2  # every file but the lost ones, the README and the record


async def test_links_already_in_the_folder_are_never_followed(tmp_path: Path) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside"
    (out / ".git" / "hooks").mkdir(parents=True)
    outside.mkdir()
    (out / ".git" / "config").write_text("[core]\n")
    victim = outside / "victim.txt"
    victim.write_text("keep me\n")
    (out / "x").symlink_to(out / ".git")  # a folder that resolves into the repository's control folder
    (out / "y").symlink_to(outside)  # a folder that resolves out of the output folder
    (out / "z.py").symlink_to(victim)  # a file that is a link
    os.link(victim, out / "hard.py")  # a file that is another name of a file outside
    os.mkfifo(out / "pipe.py")  # a file nobody would ever read from

    files = {"x/config": "[core]\n\tfsmonitor = evil\n", "x/hooks/pre-commit": "evil\n", "y/victim.txt": "evil\n",
             "z.py": "z = 1\n", "hard.py": "h = 1\n", "pipe.py": "p = 1\n", "ok.py": "ok = 1\n"}
    result = await FolderPublisher(out).publish(publication(files))

    assert (out / ".git" / "config").read_text() == "[core]\n" and list((out / ".git" / "hooks").iterdir()) == []
    assert victim.read_text() == "keep me\n" and list(outside.iterdir()) == [victim]
    assert "x/config (x is a link, not a folder" in result.note and "y/victim.txt (y is a link" in result.note
    for name, content in {"z.py": "z = 1\n", "hard.py": "h = 1\n", "pipe.py": "p = 1\n", "ok.py": "ok = 1\n"}.items():
        assert not (out / name).is_symlink() and (out / name).read_text() == content  # replaced, not written through
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


@pytest.mark.parametrize("inside", [".git", ".git/hooks", "repo/.hg/x", ".vscode"])
async def test_the_folder_itself_may_not_be_inside_a_control_folder(tmp_path: Path, inside: str) -> None:
    with pytest.raises(CheckInError, match="a folder tools on this machine act on"):
        await FolderPublisher(tmp_path / inside).publish(publication())
    (tmp_path / "link").symlink_to(tmp_path / ".git", target_is_directory=True)
    with pytest.raises(CheckInError, match="inside '.git'"):  # also when a link leads there
        await FolderPublisher(tmp_path / "link" / "out").publish(publication())


async def test_a_disk_filling_up_loses_only_the_file_that_did_not_fit(tmp_path: Path) -> None:
    from tests.bot.disks import small_disk

    with small_disk(tmp_path, size="1m") as disk:
        if not disk.mounted:
            pytest.fail("this test needs a small tmpfs: run the suite as root, as CI does")
        files = {"a.py": "a = 1\n", "big.bin": "x" * 3_000_000, "z.py": "z = 1\n"}
        result = await FolderPublisher(disk.folder / "out").publish(publication(files))
        written = tree(disk.folder / "out")
    assert "big.bin (the disk is full)" in result.note
    assert written["a.py"] == "a = 1\n" and written["z.py"] == "z = 1\n" and "big.bin" not in written
    assert "README.md" in written


async def test_files_a_person_already_has_in_the_folder_are_kept_and_named(tmp_path: Path) -> None:
    out = tmp_path / "project"
    out.mkdir()
    (out / "mod.py").write_text("MY OWN WORK\n")
    (out / "README.md").write_text("# My project\n")
    (out / "notes.txt").write_text("notes\n")
    (out / "same.py").write_text("S = 1\n")  # what the run writes too: nothing is lost by writing it

    result = await FolderPublisher(out).publish(publication({"mod.py": "X = 1\n", "test_mod.py": "t\n",
                                                             "same.py": "S = 1\n"}))

    assert (out / "mod.py").read_text() == "MY OWN WORK\n" and (out / "README.md").read_text() == "# My project\n"
    assert (out / "notes.txt").read_text() == "notes\n" and (out / "test_mod.py").read_text() == "t\n"
    kept = "a file of that name was already there and codegen-chat did not write it: kept as it was"
    assert result.note == f"not written: mod.py ({kept}); README.md ({kept})"


async def test_a_later_run_replaces_its_own_files_but_not_one_the_person_changed_since(tmp_path: Path) -> None:
    out = tmp_path / "out"
    await FolderPublisher(out).publish(publication({"mod.py": "X = 1\n", "util.py": "U = 1\n"}))
    (out / "util.py").write_text("U = 1  # my change\n")

    result = await FolderPublisher(out).publish(publication({"mod.py": "X = 2\n", "util.py": "U = 2\n"}))

    assert (out / "mod.py").read_text() == "X = 2\n" and (out / "README.md").read_text().startswith("# Adder")
    assert (out / "util.py").read_text() == "U = 1  # my change\n"
    assert result.note.startswith("not written: util.py (a file of that name was already there")
