#!/usr/bin/env python3
"""Interop over random emulated paths: aioquic against mpquic, both ways (docs/LAB.md,
"Randomized campaigns").

Each run draws one path (2-50 Mbit/s, 10-300 ms, random or Gilbert-Elliott loss, reordering
jitter, maybe an outage or a rate or delay change at 1-2 s), starts `mpquic emulate` with it in
front of a server, and downloads a 2 MB file through it: the aioquic client from `mpquic
server`, or `mpquic client` from the aioquic server (HTTP/0.9, ALPN hq-interop). A run passes
when the client exits 0 with the file byte for byte. Flagged runs are printed with their path;
exits 1 if any was flagged.

    interop/aioquic/setup.sh          # once: the pinned aioquic in target/aioquic-venv
    cargo build --release -p mpquic-cli
    scripts/interop-campaign.py [-n 40] [--seed 1]
"""
import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPQUIC = os.path.join(REPO, "target", "release", "mpquic")
PYTHON = os.path.join(REPO, "target", "aioquic-venv", "bin", "python")
PEER = os.path.join(REPO, "interop", "aioquic", "peer.py")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def random_path(rnd):
    spec = f"rate={rnd.choice([2, 5, 10, 20, 50])}mbit,rtt={rnd.choice([10, 40, 80, 150, 300])}ms"
    spec += f",queue={rnd.choice(['1bdp', '0.5bdp', '2bdp', '20pkt'])}"
    r = rnd.random()
    if r < 0.3:
        spec += f",loss={rnd.choice([0.5, 1, 3])}%"
    elif r < 0.4:
        spec += ",loss=ge:1%,20%"
    if rnd.random() < 0.2:
        spec += f",jitter={rnd.choice([1, 5])}ms,reorder=true"
    e, t = rnd.random(), rnd.choice([1000, 2000])
    if e < 0.15:
        spec += f",down_at={t}ms,up_at={t + rnd.choice([500, 2000])}ms"
    elif e < 0.3:
        spec += f",rate_at={t}ms:{rnd.choice([1, 5, 50])}mbit"
    elif e < 0.4:
        spec += f",delay_at={t}ms:{rnd.choice([5, 100])}ms"
    return spec


def start_server(direction, root):
    """The server process and its port."""
    if direction == "aioquic->mpquic":
        port = free_port()
        server = subprocess.Popen(
            [MPQUIC, "server", "--listen", f"127.0.0.1:{port}", "--root", root],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return server, port
    server = subprocess.Popen(
        [PYTHON, PEER, "server", "--port", "0", "--root", root],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return server, int(server.stdout.readline().split()[1])


def fetch(direction, port, out):
    """Runs the client; returns (exit code, bytes received, last stderr line)."""
    if direction == "aioquic->mpquic":
        cmd = [PYTHON, PEER, "client", "--port", str(port), "--get", "/f.bin", "--out", out,
               "--timeout", "80"]
        body = os.path.join(out, "body-0")
    else:
        cmd = [MPQUIC, "client", f"https://127.0.0.1:{port}/f.bin", "--insecure",
               "--alpn", "hq-interop", "--output", out, "--timeout", "30s"]
        body = out
    c = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    got = open(body, "rb").read() if os.path.isfile(body) else b""
    return c.returncode, got, (c.stderr.strip().splitlines() or [""])[-1][:200]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=40)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rnd = random.Random(a.seed)
    work = tempfile.TemporaryDirectory(prefix="mpquic-interop-campaign-")
    data = random.Random(a.seed).randbytes(2_000_000)
    with open(os.path.join(work.name, "f.bin"), "wb") as f:
        f.write(data)
    flagged = []
    for i in range(a.n):
        spec = random_path(rnd)
        direction = rnd.choice(["aioquic->mpquic", "mpquic->aioquic"])
        server, port = start_server(direction, work.name)
        listen = free_port()
        emulator = subprocess.Popen(
            [MPQUIC, "emulate", "--listen", f"127.0.0.1:{listen}", "--server",
             f"127.0.0.1:{port}", "--path", spec, "--seed", str(i), "--duration", "120s"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        started = time.monotonic()
        try:
            code, got, err = fetch(direction, listen, os.path.join(work.name, f"out{i}"))
            flag = "" if code == 0 and got == data else f"exit {code}, {len(got)} bytes: {err}"
        except subprocess.TimeoutExpired:
            flag = "no result within 120 s"
        finally:
            for proc in (emulator, server):
                proc.kill()
                proc.wait()
        print(f"{i} {direction} {spec}: {time.monotonic() - started:.2f} s {flag}", flush=True)
        if flag:
            flagged.append((i, direction, spec, flag))
    print(f"flagged: {len(flagged)} of {a.n}")
    for row in flagged:
        print("  %d %s %s: %s" % row)
    sys.exit(1 if flagged else 0)


if __name__ == "__main__":
    main()
