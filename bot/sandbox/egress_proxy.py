"""The dependency setup's only way out: an HTTP(S) proxy that lets through package registries and nothing else.

It runs inside its own hardened container (``python3 -c`` this file's source, standard library only),
attached to the setup's internal network and to an outside one. A request may leave only when:

- it is ``CONNECT host:443`` (HTTPS) or a plain ``http://host/...`` request on port 80;
- ``host`` is a name (never a raw IP address) on the allow-list (``[sandbox] setup_allowed_hosts``);
- every address the proxy itself resolves the name to is a public one: not loopback, private
  (RFC 1918), link-local, CGNAT, multicast, reserved or unspecified, not in any Docker network's range,
  and the same for IPv6 (IPv4-mapped and embedded addresses are checked as IPv4).

The connection then goes to the address the proxy checked, so a name cannot change its answer between
the check and the connect. Clients must come from the setup's internal network.

Imported by the sandbox (for its source and for ``refusal``), run by the container; nothing here runs
on the bot's host.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import socketserver
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import Any

PORT = 3128
HEAD_LIMIT = 16 * 1024
IDLE_S = 120.0
PORTS = {"CONNECT": 443, "HTTP": 80}

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def refusal(host: str, port: int, addresses: Sequence[str], allowed: Iterable[str],
            blocked: Iterable[Network], kind: str = "CONNECT") -> str:
    """Why a request for ``host:port`` (resolved to ``addresses``) may not leave, or '' when it may."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if _is_ip(name):
        return f"{host}: raw IP addresses are not allowed, only registry names"
    if name not in {h.strip().rstrip(".").lower() for h in allowed}:
        return f"{host}: not an allowed package registry"
    if port != PORTS[kind]:
        return f"{host}:{port}: only port {PORTS[kind]} is allowed for {kind}"
    if not addresses:
        return f"{host}: the name does not resolve"
    networks = list(blocked)
    for text in addresses:
        why = _not_public(ipaddress.ip_address(text.split("%", 1)[0]), networks)
        if why:
            return f"{host} resolves to {text}, {why}"
    return ""


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _not_public(address: Address, blocked: Sequence[Network]) -> str:
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is not None:
            return _not_public(embedded, blocked) or ("" if embedded.is_global else "not a public address")
    if any(address in network for network in blocked if network.version == address.version):
        return "inside a Docker network"
    if address.is_multicast or not address.is_global:
        return "not a public address (loopback, private, link-local, CGNAT, multicast or reserved)"
    return ""


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class Rules:
    """What the proxy lets through, from the JSON the sandbox passes on its command line."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.allowed = [str(h) for h in settings.get("allowed", [])]
        self.blocked = [ipaddress.ip_network(str(n)) for n in settings.get("blocked", [])]
        clients = settings.get("clients")
        self.clients = ipaddress.ip_network(str(clients)) if clients else None

    def client_allowed(self, peer: str) -> bool:
        return self.clients is None or ipaddress.ip_address(peer.split("%", 1)[0]) in self.clients


class Handler(socketserver.StreamRequestHandler):
    """One client connection: read the request head, decide, then relay or refuse."""

    server: Server

    def handle(self) -> None:
        self.connection.settimeout(IDLE_S)
        if not self.server.rules.client_allowed(self.client_address[0]):
            return
        head = self._head()
        if head is None:
            return self._answer(400, "the request head is too long or incomplete")
        method, target, rest = _request_line(head)
        if method == "CONNECT":
            host, port = _split_host_port(target, 443)
            upstream = self._open(host, port, "CONNECT")
            if upstream is not None:
                self.connection.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                _relay(self.connection, upstream)
        elif target.startswith("http://"):
            authority, _, path = target[len("http://"):].partition("/")
            host, port = _split_host_port(authority, 80)
            upstream = self._open(host, port, "HTTP")
            if upstream is not None:
                upstream.sendall(forwarded(method, authority, path, rest))
                _relay(self.connection, upstream)
        else:
            self._answer(405, "only CONNECT and absolute http:// requests are proxied")

    def _head(self) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.connection.recv(4096)
            if not chunk or len(data) + len(chunk) > HEAD_LIMIT:
                return None
            data += chunk
        return data

    def _open(self, host: str, port: int, kind: str) -> socket.socket | None:
        addresses = resolve(host, port) if not _is_ip(host.strip("[]")) else [host.strip("[]")]
        rules = self.server.rules
        why = refusal(host, port, addresses, rules.allowed, rules.blocked, kind)
        if why:
            print(f"egress refused: {why}", file=sys.stderr, flush=True)
            self._answer(403, why)
            return None
        for address in addresses:
            try:
                return socket.create_connection((address, port), timeout=30)
            except OSError:
                continue
        self._answer(502, f"{host}: no address answered")
        return None

    def _answer(self, code: int, why: str) -> None:
        body = (why + "\n").encode()
        reason = {400: "Bad Request", 403: "Forbidden", 405: "Method Not Allowed", 502: "Bad Gateway"}[code]
        with _quietly():
            self.connection.sendall(f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\nContent-Length: "
                                    f"{len(body)}\r\nConnection: close\r\n\r\n".encode() + body)


def _request_line(head: bytes) -> tuple[str, str, bytes]:
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        return "", "", rest
    return parts[0].upper(), parts[1], rest


def _split_host_port(text: str, default: int) -> tuple[str, int]:
    if text.startswith("["):  # [v6]:port
        host, _, port = text[1:].partition("]")
        port = port.lstrip(":")
    else:
        host, _, port = text.rpartition(":") if text.count(":") == 1 else (text, "", "")
    try:
        return host, int(port) if port else default
    except ValueError:
        return host, -1


def _dropped(name: bytes) -> bool:
    return name in (b"host", b"connection") or name.startswith(b"proxy-")


def forwarded(method: str, authority: str, path: str, rest: bytes) -> bytes:
    """A plain http:// request as it leaves for ``authority``: its Host is the host that was checked, whatever the
    client wrote (a Host naming another site served by the same CDN as a registry would reach that site), and no
    proxy or connection headers."""
    lines = [line for line in rest.split(b"\r\n") if line and not _dropped(line.partition(b":")[0].strip().lower())]
    head = [f"{method} /{path} HTTP/1.1".encode("latin-1"), b"Host: " + authority.encode("latin-1"), *lines]
    return b"\r\n".join(head) + b"\r\nConnection: close\r\n\r\n"


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    upstream.settimeout(IDLE_S)

    def pump(source: socket.socket, sink: socket.socket) -> None:
        with _quietly():
            while data := source.recv(65536):
                sink.sendall(data)
        with _quietly():
            sink.shutdown(socket.SHUT_WR)

    other = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    other.start()
    pump(client, upstream)
    other.join(IDLE_S)
    upstream.close()


class _quietly:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, *_rest: object) -> bool:
        return isinstance(kind, type) and issubclass(kind, OSError)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], rules: Rules) -> None:
        self.rules = rules
        super().__init__(address, Handler)


def serve(settings: dict[str, Any], host: str = "0.0.0.0", port: int = PORT) -> Server:
    """A proxy server on ``host:port`` (port 0: any free one); call ``serve_forever`` on it."""
    return Server((host, port), Rules(settings))


if __name__ == "__main__":
    serve(json.loads(sys.argv[1])).serve_forever()
