"""Ports of this machine for a server booted here: a free one picked (never one handed out lately
to another lane), and one in use named with the process that holds it.

`busy_port` is the one check the launcher makes before a boot and `evalrun lint` makes too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import threading
from pathlib import Path

from evalrun.base.errors import BootError


def port_probe(host: str = "127.0.0.1") -> socket.socket:
    """A socket bound to a port the OS picks, with SO_REUSEADDR. A child that another thread
    forks while this socket is open (the lanes of a bisect pool boot engines at once) holds a
    copy of it until the child execs; without the flag that copy keeps the port "in use" for
    check_port and for the engine's own bind, and the boot fails for nothing."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    return sock


# The ports free_port handed out lately in this process. Two lanes of a bisect pool ask for a port
# at once and the engine binds it seconds later, so the OS can offer the same free port to both;
# a port handed out is not offered again while it is among the last _RECENT_PORTS.
_RECENT_PORTS = 512
_handed_out: dict[int, None] = {}
_handed_out_lock = threading.Lock()


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the OS picks it), not one this process handed out
    lately to another server that may not have bound it yet."""
    with _handed_out_lock:
        for _ in range(64):
            with port_probe(host) as sock:
                port = int(sock.getsockname()[1])
            if port not in _handed_out:
                break
        _handed_out[port] = None
        while len(_handed_out) > _RECENT_PORTS:
            del _handed_out[next(iter(_handed_out))]
        return port


def port_in_use(host: str, port: int) -> bool:
    """Whether something holds host:port: a bind with SO_REUSEADDR fails with EADDRINUSE, as a
    server's would. IPv6 hosts (`::1`) are bound as IPv6; other bind errors (an address this host
    lacks, a privileged port) are not a port in use, and the server's own start says why."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def port_holder(port: int) -> str | None:
    """'pid 123 (cmdline)' of the process listening on a TCP port, best effort (Linux /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                parts = line.split()
                if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(parts[9])
    if not inodes:
        return None
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    cmd = (
                        (proc / "cmdline")
                        .read_bytes()
                        .replace(b"\0", b" ")
                        .decode(errors="replace")
                    )
                    return f"pid {proc.name} ({' '.join(cmd.split())[:80]})"
    return None


PORT_BUSY_HINT = (
    "stop that server, or pick another port with --set port=N (port 0 picks a free one)"
)


def busy_port(host: str, port: int) -> str | None:
    """`port 8000 on 127.0.0.1 is already in use by pid 123 (...)` when something holds the port, else
    None: the one check the launcher (before a boot) and `evalrun lint` both make."""
    if not port_in_use(host, port):
        return None
    holder = port_holder(port)
    return f"port {port} on {host} is already in use" + (f" by {holder}" if holder else "")


def check_port(host: str, port: int) -> None:
    """BootError(kind=port_in_use) when something already holds the port."""
    busy = busy_port(host, port)
    if busy:
        raise BootError(busy, kind="port_in_use", hint=PORT_BUSY_HINT)
