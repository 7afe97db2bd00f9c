"""The trial warden's last check for leftover processes (`Warden._orphans` in
aorta/run/warden_server.py), timed with N trial tokens known and M extra processes running,
each carrying a token of no trial (the worst case: every token is looked for in each).

    python bench/bench_warden_last_check.py [--tokens 5000] [--processes 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import secrets
import statistics
import subprocess
import time

from aorta.host.proc_table import TOKEN_VARIABLE, processes
from aorta.run import warden_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=5000)
    parser.add_argument("--processes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    warden = warden_server.Warden(-1, -1)
    warden.me = -1      # this process is not a warden: its children are no orphans
    for _ in range(args.tokens):
        token = secrets.token_hex(16)
        if isinstance(warden.tokens, list):     # the tree before kept environment entries
            warden.tokens.append(f"{TOKEN_VARIABLE}={token}\0".encode())
        else:
            warden.tokens.add(token)
    sleepers = [subprocess.Popen(["sleep", "600"], env={
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), TOKEN_VARIABLE: secrets.token_hex(16)})
        for _ in range(args.processes)]
    try:
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            found = warden._orphans()
            times.append(time.perf_counter() - start)
        assert not found
        print(f"last check: {len(list(processes()))} processes, {args.tokens} tokens: median "
              f"{statistics.median(times):.3f} s (runs {', '.join(f'{t:.3f}' for t in times)}); "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
              f"Python {platform.python_version()}")
    finally:
        for proc in sleepers:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
