"""Knowing when a client has read what we sent: pipes, Unix sockets and local TCP (Linux)."""

from __future__ import annotations

import os
import socket
import sys

import anyio
import pytest

from cassette.transports._drain import tcp_peer_counter, until_read
from cassette.transports._fdio import unread_counter

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's counters")


@linux
def test_a_pipe_counts_what_its_reader_has_not_read() -> None:
    read_end, write_end = os.pipe()
    try:
        count = unread_counter(write_end)
        assert count is not None
        assert count() == 0
        os.write(write_end, b"hello\n")
        assert count() == 6
        os.read(read_end, 6)
        assert count() == 0
    finally:
        os.close(read_end)
        os.close(write_end)


@linux
def test_a_unix_socket_counts_what_its_peer_has_not_consumed() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        count = unread_counter(ours.fileno())
        assert count is not None
        ours.sendall(b"x" * 100)
        unread = count()
        assert unread is not None
        assert unread > 0
        theirs.recv(100)
        assert count() == 0


def test_a_regular_file_cannot_tell() -> None:
    with open(os.devnull, "wb") as sink:
        assert unread_counter(sink.fileno()) is None


@linux
def test_a_local_tcp_client_is_watched_through_its_receive_queue() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
        with client, server:
            count = tcp_peer_counter(client.getsockname(), server.getsockname())
            assert count is not None
            assert count() == 0
            server.sendall(b"event: message\n\n")
            client.settimeout(5)
            # Wait until the bytes are in the client's queue, without reading them.
            assert len(client.recv(16, socket.MSG_PEEK | socket.MSG_WAITALL)) == 16
            assert count() == 16
            client.recv(16)
            assert anyio.run(until_read, count) is True


@linux
def test_tcp_counter_gives_up_on_a_connection_it_cannot_see() -> None:
    count = tcp_peer_counter(("127.0.0.1", 1), ("127.0.0.1", 2))
    assert count is not None
    assert count() is None
    assert anyio.run(until_read, count) is False
    assert tcp_peer_counter(("example.org", 1), ("127.0.0.1", 2)) is None
    assert tcp_peer_counter(None, ("127.0.0.1", 2)) is None
