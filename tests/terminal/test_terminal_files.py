"""``--file`` reads regular files only, never blocks, and sizes a file before reading it."""

import asyncio
import os
import socket

import pytest

from adapters.terminal import read_attachments
from agents.errors import UserInputError
from tests.terminal.test_terminal import cli, write_config


@pytest.fixture
def specials(tmp_path):
    """One of each thing a name can point at that is not a regular file, and a link to each."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    folder = tmp_path / "folder"
    folder.mkdir()
    found = {"pipe": (fifo, "is a named pipe"), "socket": (tmp_path / "sock", "is a socket"),
             "device": ("/dev/zero", "is a device"), "tty": ("/dev/tty", ""), "folder": (folder, "is a folder"),
             "proc": ("/proc/self/environ", "is not an ordinary file"),
             "sys": ("/sys/kernel/mm/transparent_hugepage/enabled", "is not an ordinary file")}
    for name, (target, why) in list(found.items()):
        link = tmp_path / f"link-to-{name}"
        link.symlink_to(target)
        found[f"link to {name}"] = (link, why)
    yield {name: (str(path), why) for name, (path, why) in found.items() if os.path.lexists(path)}
    server.close()


async def test_anything_but_a_regular_file_is_refused_without_blocking(specials):
    for name, (path, why) in specials.items():
        with pytest.raises(UserInputError) as caught:
            await read_attachments([path], 10_000)
        message = str(caught.value)
        assert path in message and "\n" not in message, name
        assert why in message or "Cannot read" in message, (name, message)


async def test_a_pipe_with_no_writer_does_not_stall_the_event_loop(specials):
    """Were the pipe opened in the event loop's thread, this ticker would never run again."""
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    with pytest.raises(UserInputError, match="named pipe"):
        await read_attachments([specials["pipe"][0]], 10_000)
    ticking.cancel()
    assert ticks > 0


async def test_a_huge_sparse_file_is_refused_by_its_size(tmp_path):
    huge = tmp_path / "huge.py"
    with huge.open("wb") as file:
        file.truncate(1 << 30)  # 1 GB that takes no disk space: refused from its size, never read
    with pytest.raises(UserInputError, match=r"huge.py is 1,073,741,824 bytes; attachments are limited to 1,000"):
        await read_attachments([str(huge)], 1000)


async def test_regular_files_and_links_to_them_are_read(tmp_path):
    (tmp_path / "main.py").write_text("print('hi')\n")
    (tmp_path / "alias.py").symlink_to(tmp_path / "main.py")
    (tmp_path / "empty.py").write_text("")
    attached = await read_attachments([str(tmp_path / n) for n in ("main.py", "alias.py", "empty.py")], 1000)
    assert [(a.name, a.content) for a in attached] == [("main.py", "print('hi')\n"), ("alias.py", "print('hi')\n"),
                                                       ("empty.py", "")]


async def test_the_cli_refuses_a_fifo_and_a_device_with_one_line(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    os.mkfifo(tmp_path / "pipe")
    for path, why in ((tmp_path / "pipe", "is a named pipe"), ("/dev/zero", "is a device"),
                      ("/proc/self/environ", "is not an ordinary file")):
        code, out, err = await cli(tmp_path, "run", "task", "--file", str(path), config=config)
        assert code == 2 and why in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert model_server.requests == []
