"""aioquic as a third interop peer for mpquic's tests (crates/mpquic/tests/interop_aioquic.rs).

Two roles, both speaking HTTP/0.9 over QUIC (ALPN hq-interop, as the QUIC interop runner does):

* ``server``: serves the files of ``--root`` ("GET /name" on a bidirectional stream); any other
  request is read to its end and answered with its length in decimal (an upload check). Every
  DATAGRAM frame (RFC 9221) is echoed back. Prints ``listening PORT`` once bound.
* ``client``: fetches each ``--get`` path (``--repeat`` times), optionally with a session ticket
  (``--ticket FILE``: read if present, the newest ticket written back), requests sent as 0-RTT
  (``--zero-rtt``), a
  key update, a NAT rebinding (a new UDP socket) or new connection IDs part-way through the
  downloads, an upload, and datagrams. Bodies go to ``--out DIR/body-N``; a JSON report is the
  last line of standard output.

Exit status 0 when every step worked, 1 with one readable line on standard error otherwise.
"""

import argparse
import asyncio
import datetime
import json
import os
import pickle
import socket
import ssl
import sys
import tempfile
import time

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.quic import events
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ALPN = "hq-interop"
MAX_REQUEST = 64 * 1024 * 1024


def self_signed(directory):
    """A fresh ECDSA P-256 certificate for "localhost" and its key, as PEM files in directory."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path = os.path.join(directory, "cert.pem")
    key_path = os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    return cert_path, key_path


class HqServerProtocol(QuicConnectionProtocol):
    """One server connection: answers requests per stream, echoes datagrams."""

    root = "."

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._requests = {}

    def quic_event_received(self, event):
        if isinstance(event, events.StreamDataReceived):
            buf = self._requests.setdefault(event.stream_id, bytearray())
            buf.extend(event.data)
            if len(buf) > MAX_REQUEST:
                self._quic.reset_stream(event.stream_id, 0x10)
                del self._requests[event.stream_id]
            elif event.end_stream:
                self._answer(event.stream_id, bytes(self._requests.pop(event.stream_id)))
        elif isinstance(event, events.DatagramFrameReceived):
            self._quic.send_datagram_frame(event.data)
        self.transmit()

    def _answer(self, stream_id, request):
        if request.startswith(b"GET /"):
            target = request[5:].split(b"\r\n", 1)[0].split(b" ", 1)[0].decode("ascii", "replace")
            path = os.path.realpath(os.path.join(self.root, target))
            if not path.startswith(self.root + os.sep) or not os.path.isfile(path):
                self._quic.reset_stream(stream_id, 0x10c)
                return
            with open(path, "rb") as f:
                body = f.read()
        else:
            body = str(len(request)).encode()
        self._quic.send_stream_data(stream_id, body, end_stream=True)


async def run_server(args):
    config = QuicConfiguration(
        is_client=False,
        alpn_protocols=[ALPN],
        max_datagram_frame_size=65536,
        max_data=args.max_data,
        max_stream_data=args.max_stream_data,
    )
    # The files are read here and removed at once: the test ends this process with a kill,
    # which would leave the directory behind.
    with tempfile.TemporaryDirectory() as tmp:
        config.load_cert_chain(*self_signed(tmp))
    tickets = {}
    HqServerProtocol.root = os.path.realpath(args.root)
    server = await serve(
        args.host,
        args.port,
        configuration=config,
        create_protocol=HqServerProtocol,
        session_ticket_fetcher=tickets.pop if args.single_use_tickets else tickets.get,
        session_ticket_handler=lambda t: tickets.__setitem__(t.ticket, t),
        retry=args.retry,
    )
    port = server._transport.get_extra_info("sockname")[1]
    print(f"listening {port}", flush=True)
    # Until the test kills us, or standard input closes (the test process went away).
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.close()


class ClientProtocol(QuicConnectionProtocol):
    """The client connection: records handshake outcome, datagrams and received bytes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.handshake = None
        self.datagrams = []
        self.datagram_waiter = None
        self.received = 0
        self.on_progress = None
        self.tokens = []

    def quic_event_received(self, event):
        super().quic_event_received(event)
        if isinstance(event, events.HandshakeCompleted):
            self.handshake = (time.monotonic(), event)
        elif isinstance(event, events.DatagramFrameReceived):
            self.datagrams.append(event.data)
            if self.datagram_waiter and not self.datagram_waiter.done():
                self.datagram_waiter.set_result(None)
        elif isinstance(event, events.StreamDataReceived):
            self.received += len(event.data)
            if self.on_progress:
                self.on_progress(self.received)


def bound_socket():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    return sock


async def rebind(protocol):
    """NAT rebinding as the interop runner tests it: the same connection from a new socket."""
    loop = asyncio.get_running_loop()
    old = protocol._transport
    await loop.create_datagram_endpoint(lambda: protocol, sock=bound_socket())
    old.close()


def load_ticket(path):
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            return pickle.load(f)
    return None


def save_ticket(path, ticket):
    if path:
        with open(path, "wb") as f:
            pickle.dump(ticket, f)


def start_request(protocol, target):
    """Write a GET on a new stream at once (no await: before the first datagram leaves, so that
    with a ticket the request is in 0-RTT whatever the timing); returns the stream's reader."""
    stream_id = protocol._quic.get_next_available_stream_id()
    reader, writer = protocol._create_stream(stream_id)
    writer.write(f"GET {target}\r\n".encode())
    writer.write_eof()
    return reader


async def upload(protocol, size):
    reader, writer = await protocol.create_stream()
    writer.write(b"P" * size)
    writer.write_eof()
    return int((await reader.read()).decode())


async def run_client(args):
    config = QuicConfiguration(
        is_client=True,
        alpn_protocols=[ALPN],
        server_name="localhost",
        verify_mode=ssl.CERT_NONE,
        max_datagram_frame_size=65536 if args.datagrams else None,
        max_data=args.max_data,
        max_stream_data=args.max_stream_data,
    )
    config.session_ticket = load_ticket(args.ticket)
    if args.token:
        config.token = bytes.fromhex(args.token)
    tokens = []
    connection = QuicConnection(
        configuration=config,
        session_ticket_handler=lambda t: save_ticket(args.ticket, t),
        token_handler=tokens.append,
    )
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_datagram_endpoint(
        lambda: ClientProtocol(connection), sock=bound_socket()
    )
    report = {"rebound": False, "key_updated": False, "new_cid": False}

    def progress(received):
        if args.key_update_after is not None and received >= args.key_update_after:
            args.key_update_after = None
            protocol.request_key_update()
            report["key_updated"] = True
        if args.new_cid_after is not None and received >= args.new_cid_after:
            args.new_cid_after = None
            protocol.change_connection_id()
            report["new_cid"] = True
        if args.rebind_after is not None and received >= args.rebind_after:
            args.rebind_after = None
            loop.create_task(rebind(protocol))
            report["rebound"] = True

    protocol.on_progress = progress
    start = time.monotonic()
    zero_rtt = args.zero_rtt and config.session_ticket is not None
    protocol.connect((args.host, args.port), transmit=not zero_rtt)
    try:
        if zero_rtt:
            readers = [start_request(protocol, t) for t in args.get]
            protocol.transmit()
            await protocol.wait_connected()
        else:
            await protocol.wait_connected()
            readers = [start_request(protocol, t) for t in args.get]
        bodies = await asyncio.gather(*(r.read() for r in readers))
        for _ in range(1, args.repeat):
            # Sequential rounds on one connection: the server must keep granting streams
            # (MAX_STREAMS, RFC 9000 §4.6) as earlier ones close.
            again = await asyncio.gather(*(start_request(protocol, t).read() for t in args.get))
            if again != bodies:
                raise RuntimeError("a repeated request returned other bytes")
        if args.upload:
            report["upload_reply"] = await upload(protocol, args.upload)
        if args.datagrams:
            report["datagrams_echoed"] = await echo_datagrams(protocol, args.datagrams)
        if args.wait_tokens:
            # NEW_TOKEN arrives after the handshake; give it a round trip or two on loopback.
            await asyncio.wait_for(poll_until(lambda: tokens), 5)
    finally:
        protocol.close()
        await protocol.wait_closed()
    done_at, hs = protocol.handshake
    os.makedirs(args.out, exist_ok=True)
    for i, body in enumerate(bodies):
        with open(os.path.join(args.out, f"body-{i}"), "wb") as f:
            f.write(body)
    report.update(
        handshake_ms=(done_at - start) * 1000.0,
        total_ms=(time.monotonic() - start) * 1000.0,
        alpn=hs.alpn_protocol,
        session_resumed=hs.session_resumed,
        early_data_accepted=hs.early_data_accepted,
        lengths=[len(b) for b in bodies],
        tokens=[t.hex() for t in tokens],
    )
    print(json.dumps(report), flush=True)


async def poll_until(condition):
    while not condition():
        await asyncio.sleep(0.01)


async def echo_datagrams(protocol, count):
    """Send count datagrams and wait (at most 5 s) for the echoes; returns how many came back."""
    for i in range(count):
        protocol._quic.send_datagram_frame(f"datagram {i}".encode())
    protocol.transmit()
    deadline = time.monotonic() + 5
    while len(protocol.datagrams) < count and time.monotonic() < deadline:
        protocol.datagram_waiter = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(protocol.datagram_waiter, deadline - time.monotonic())
        except asyncio.TimeoutError:
            break
    return len(protocol.datagrams)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--root", required=True)
    s.add_argument("--retry", action="store_true")
    s.add_argument("--single-use-tickets", action="store_true")
    c = sub.add_parser("client")
    c.add_argument("--host", default="127.0.0.1")
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--get", action="append", default=[])
    c.add_argument("--out", required=True)
    c.add_argument("--ticket")
    c.add_argument("--token", help="address-validation token (hex) from an earlier NEW_TOKEN")
    c.add_argument("--wait-tokens", action="store_true")
    c.add_argument("--zero-rtt", action="store_true")
    c.add_argument("--key-update-after", type=int)
    c.add_argument("--new-cid-after", type=int)
    c.add_argument("--rebind-after", type=int)
    c.add_argument("--repeat", type=int, default=1, help="fetch the --get paths this many times")
    c.add_argument("--upload", type=int, default=0)
    c.add_argument("--datagrams", type=int, default=0)
    c.add_argument("--timeout", type=float, default=20.0)
    for p in (s, c):
        # aioquic's own defaults (1 MiB each) unless a test asks for others.
        p.add_argument("--max-data", type=int, default=QuicConfiguration.max_data)
        p.add_argument("--max-stream-data", type=int, default=QuicConfiguration.max_stream_data)
    args = parser.parse_args()
    role = run_server(args) if args.role == "server" else run_client(args)
    try:
        asyncio.run(asyncio.wait_for(role, getattr(args, "timeout", None)))
    except Exception as error:  # one readable line for the test's failure message
        print(f"aioquic {args.role}: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
