"""A loopback relay to the Docker engine's socket that can be cut, to lose the engine for real mid-run.

The sandbox's client talks to a unix socket in a temp dir; every byte goes on to the real engine. When
the client's requests contain ``cut_on`` (say ``b"DELETE /v"``: the removal), or when ``cut()`` is
called, every connection is dropped and no new one is accepted, exactly as when the engine stops. With
``hold_open``, a connection the engine closes stays open towards the client, as dockerd was seen to keep an exec's
output stream open after its container was removed.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path

ENGINE_SOCKET = "/var/run/docker.sock"


class EngineRelay:
    def __init__(self, path: Path, cut_on: bytes | None = None, hold_open: bool = False) -> None:
        self.path, self.cut_on, self.hold_open = path, cut_on, hold_open
        self.url = f"unix://{path}"
        self.cut_done = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Lose the engine: drop every connection, accept no more."""
        with self._lock:
            self.cut_done.set()
            for sock in [self._listener, *self._sockets]:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def _accept(self) -> None:
        while not self.cut_done.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(ENGINE_SOCKET)
            with self._lock:
                if self.cut_done.is_set():
                    client.close()
                    engine.close()
                    return
                self._sockets += [client, engine]
            threading.Thread(target=self._pump, args=(client, engine, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(engine, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, watch: bool) -> None:
        seen = b""
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if watch and self.cut_on is not None:
                    window = seen + data  # the words may straddle two reads, or open a long one
                    if self.cut_on in window:
                        self.cut()
                        return
                    seen = window[-len(self.cut_on):]
                sink.sendall(data)
        if self.hold_open and not watch:
            return  # the engine is done with this connection; the client is never told
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
