"""Quickstart payload: a dense matrix product in pure Python, three ways.

Self-checking (exit 1 on a wrong result), cheap by default, sized from the command line,
no dependencies beyond the standard library, so it runs on any machine.

    python3 matmul.py --size 80 --kernel blocked --repeat 2
"""

from __future__ import annotations

import argparse
import random
import sys


def matmul_naive(a, b, n):
    c = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            total = 0.0
            for k in range(n):
                total += a[i][k] * b[k][j]
            c[i][j] = total
    return c


def matmul_transposed(a, b, n):
    bt = [list(col) for col in zip(*b)]
    return [[sum(x * y for x, y in zip(row, col)) for col in bt] for row in a]


def matmul_blocked(a, b, n, block=16):
    c = [[0.0] * n for _ in range(n)]
    for kk in range(0, n, block):
        for i in range(n):
            ci, ai = c[i], a[i]
            for k in range(kk, min(kk + block, n)):
                aik, bk = ai[k], b[k]
                for j in range(n):
                    ci[j] += aik * bk[j]
    return c


KERNELS = {"naive": matmul_naive, "transposed": matmul_transposed, "blocked": matmul_blocked}


def check(a, b, c, n, rng, samples=32):
    """Recompute sampled entries with math.fsum and compare (relative tolerance 1e-9)."""
    import math

    for _ in range(samples):
        i, j = rng.randrange(n), rng.randrange(n)
        want = math.fsum(a[i][k] * b[k][j] for k in range(n))
        got = c[i][j]
        if not abs(got - want) <= 1e-9 * max(1.0, abs(want)):
            print(f"matmul: FAIL at ({i}, {j}): got {got!r}, want {want!r}")
            return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=80, help="matrix order n (default 80)")
    parser.add_argument("--kernel", choices=sorted(KERNELS), default="blocked")
    parser.add_argument("--repeat", type=int, default=2, help="products to compute (default 2)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if not 1 <= args.size <= 2000 or args.repeat < 1:
        print("matmul: --size must be 1..2000 and --repeat >= 1")
        return 2
    rng = random.Random(args.seed)
    n = args.size
    a = [[rng.uniform(-1, 1) for _ in range(n)] for _ in range(n)]
    b = [[rng.uniform(-1, 1) for _ in range(n)] for _ in range(n)]
    for _ in range(args.repeat):
        c = KERNELS[args.kernel](a, b, n)
    if not check(a, b, c, n, rng):
        return 1
    print(f"matmul: kernel={args.kernel} n={n} repeat={args.repeat} PASS")
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        sys.exit(code)
