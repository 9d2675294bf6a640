#!/usr/bin/env python3
"""Randomized robustness campaign over `mpquic sim` (docs/LAB.md, "Randomized campaigns").

Draws N random scenarios from SEED: two or three paths (1-100 Mbit/s, 5-300 ms, random or
bursty Gilbert-Elliott loss, jitter with reordering, small queues), each perhaps changing its
rate, delay, loss or MTU, dying or going away for a while after the handshake; a download or
parallel requests; every design, scheduler and congestion controller, sometimes a raced
handshake, path MTU discovery or a small ACK range limit. Runs each with the given binary and
flags runs that do not complete, take over 20 s of wall time, or see a packet fail
authentication (a wrongly decoded packet number would). Prints one line per run and the flagged
runs with their command lines; exits 1 if any was flagged.

    scripts/sim-campaign.py [--bin target/release/mpquic] [-n 200] [--seed 1] [--real]

With `--extras` each scenario also gets a random `[transport]` table (key updates every 50 to
1,000 packets, 2 to 5 PTOs before a path counts as failed, a re-injection mode, pacing off,
ECN off, the largest loss thresholds, sometimes an ACK_FREQUENCY request), drawn from a
generator of its own so that the scenarios themselves stay the same.

With `--real` the same scenarios run on real sockets through the emulator (`mpquic sim
--real`: the tokio runtime over loopback, in wall-clock time), without the options the emulator
does not take (simulation-only crypto, handshake racing) and with 3 MB downloads.

A failure during the handshake is not drawn (the client cannot move or open a path before it is
confirmed, RFC 9000 §9, so those runs fail by design); MTU changes come with MTU discovery on
(with it off the datagram size is fixed and a path that shrinks below it carries nothing).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile


# What may happen to a path after the handshake: (cumulative probability, name, spec suffix
# for a change at `t` ms).
PATH_EVENTS = [
    (0.15, "rate", lambda rnd, t: f",rate_at={t}ms:{rnd.choice([1, 5, 50])}mbit"),
    (0.25, "delay", lambda rnd, t: f",delay_at={t}ms:{rnd.choice([5, 50, 200])}ms"),
    (0.32, "loss", lambda rnd, t: f",loss_at={t}ms:{rnd.choice([5, 20])}%"),
    (0.38, "mtu", lambda rnd, t: f",mtu_at={t}ms:1280"),
    (0.48, "dies", lambda rnd, t: f",down_at={t}ms"),
    (0.58, "outage", lambda rnd, t: f",down_at={t}ms,up_at={t + rnd.choice([300, 2000, 6000])}ms"),
]


def scenario(rnd):
    """One random `mpquic sim` argument list and a short description."""
    npaths = rnd.choice([2, 2, 3])
    paths, rtts = [], []
    for _ in range(npaths):
        rtt = rnd.choice([5, 10, 20, 40, 80, 150, 300])
        rtts.append(rtt)
        spec = f"rate={rnd.choice([1, 2, 5, 10, 20, 50, 100])}mbit,rtt={rtt}ms"
        spec += f",queue={rnd.choice(['1bdp', '0.5bdp', '2bdp', '20pkt'])}"
        r = rnd.random()
        if r < 0.2:
            spec += f",loss={rnd.choice([0.1, 0.5, 1, 3])}%"
        elif r < 0.3:
            spec += ",loss=ge:1%,20%"
        if rnd.random() < 0.15:
            spec += f",jitter={rnd.choice([1, 5, 20])}ms,reorder=true"
        paths.append(spec)
    after_handshake = 1000 + 3 * max(rtts)
    events = []
    for k in range(npaths):
        e, t = rnd.random(), after_handshake + rnd.choice([0, 200, 1000, 3000])
        for threshold, name, change in PATH_EVENTS:
            # The last path never dies for good: something must be left to finish on.
            if e < threshold and not (name == "dies" and k == npaths - 1):
                paths[k] += change(rnd, t)
                events.append(f"p{k} {name}")
                break
    mtu_change = any(e.endswith(" mtu") for e in events)
    if rnd.random() < 0.7:
        workload = ["--download", f"{rnd.choice([1, 3, 8])}MB"]
    else:
        sizes = [rnd.choice(["10KB", "100KB", "1MB"]) for _ in range(rnd.choice([2, 5, 10]))]
        workload = ["--requests", ",".join(sizes)]
    args = ["sim"] + [a for p in paths for a in ("--path", p)] + workload + [
        "--multipath", rnd.choice(["spns", "mpns", "auto"]),
        "--scheduler", rnd.choice(["min-rtt", "round-robin", "ecf", "blest", "redundant", "backup-aware"]),
        "--cc", rnd.choice(["cubic", "newreno", "bbr"]),
        "--seed", str(rnd.randrange(1000)),
        "--crypto", "sim", "--time-limit", "600s", "--quiet", "--json", "-",
    ]
    if rnd.random() < 0.2:
        args.append("--race")
    if rnd.random() < 0.2 or mtu_change:
        args += ["--mtu-discovery", "true"]
    if rnd.random() < 0.2:
        args += ["--ack-range-limit", str(rnd.choice([1, 2, 4, 32]))]
    return args, f"{npaths} paths {events}"


def for_real_sockets(args):
    """The scenario for `mpquic sim --real`: real crypto, no racing, 3 MB, a 120 s limit."""
    out, skip = [], 0
    for i, a in enumerate(args):
        if skip:
            skip -= 1
            continue
        if a in ("--crypto", "--time-limit"):
            skip = 1
        elif a == "--race":
            pass
        elif a == "--download":
            out += [a, "3MB"]
            skip = 1
        else:
            out.append(a)
    return out[:1] + ["--real", "--time-limit", "120s"] + out[1:]


def extras(rnd):
    """A random `[transport]` table of settings the command line does not take."""
    lines = ["[transport]"]
    if rnd.random() < 0.5:
        lines.append(f"key_update_interval = {rnd.choice([50, 200, 1000])}")
    lines.append(f"path_failure_ptos = {rnd.choice([2, 3, 5])}")
    lines.append(f'reinjection = {{ mode = "{rnd.choice(["off", "always", "tail"])}" }}')
    if rnd.random() < 0.2:
        lines.append("pacing = false")
    if rnd.random() < 0.2:
        lines.append("ecn = false")
    # Drawn last, so that the draws above stay those of earlier sessions' campaigns.
    lines.append(f"max_packet_threshold = {rnd.choice([3, 64, 1000])}")
    lines.append(f"max_time_threshold = {rnd.choice([1.125, 2.0, 8.0])}")
    if rnd.random() < 0.3:
        reordering = rnd.choice([0, 1, 3])
        lines.append(
            "[transport.ack.request_ack_frequency]\n"
            f"ack_eliciting_threshold = {rnd.choice([1, 9])}\n"
            "max_ack_delay_us = 25000\n"
            f"reordering_threshold = {reordering}"
        )
    # `mpquic sim FILE` needs paths and a workload; the command line replaces both.
    return 'paths = ["rate=1mbit,rtt=10ms"]\n[workload]\ndownload = "1MB"\n' + "\n".join(lines) + "\n"


def check(binary, args):
    """Runs one scenario; returns (flag or "", completion time)."""
    try:
        out = subprocess.run([binary] + args, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "no result within 300 s of wall time", None
    try:
        r = json.loads(out.stdout)
    except json.JSONDecodeError:
        return f"exit {out.returncode}: {out.stderr.strip()[:200]}", None
    flags = []
    if not r.get("completed"):
        flags.append(f"not completed: {r.get('outcome')}: {r.get('error')}")
    if "--real" not in args and r.get("sim_wall_time_s", 0) > 20:
        flags.append(f"{r['sim_wall_time_s']:.1f} s of wall time")
    failures = (r["sender"]["auth_failures"], r["receiver"]["auth_failures"])
    if failures != (0, 0):
        flags.append(f"authentication failures (server, client) {failures}")
    return "; ".join(flags), r.get("completion_time_s")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default="target/release/mpquic")
    p.add_argument("-n", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--real", action="store_true", help="real sockets through the emulator")
    p.add_argument("--extras", action="store_true", help="random [transport] settings too")
    a = p.parse_args()
    rnd = random.Random(a.seed)
    tmp = tempfile.TemporaryDirectory(prefix="mpquic-campaign-")
    flagged = []
    for i in range(a.n):
        args, what = scenario(rnd)
        if a.real:
            args = for_real_sockets(args)
        if a.extras:
            table = extras(random.Random(a.seed * 1_000_003 + i))
            path = os.path.join(tmp.name, f"{i}.toml")
            with open(path, "w") as f:
                f.write(table)
            args = args[:1] + [path] + args[1:]
            what += " " + " ".join(table.split("[transport]\n")[1].split("\n")).strip()
        flag, t = check(a.bin, args)
        print(f"{i} {what}: {t if t is not None else '-'} s {flag}", flush=True)
        if flag:
            flagged.append((i, flag, " ".join([a.bin] + args)))
    print(f"flagged: {len(flagged)} of {a.n}")
    for i, flag, cmd in flagged:
        print(f"  {i}: {flag}\n     {cmd}")
    sys.exit(1 if flagged else 0)


if __name__ == "__main__":
    main()
