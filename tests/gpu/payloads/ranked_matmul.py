"""Two (or more) ranks on one GPU, each with a known number of matmuls: rank r runs 4 + 4 * r.

Launched by torchrun; ranks meet through gloo on the CPU, so one GPU is enough. Inputs are made
on the CPU and copied over, so the only kernels are the products (one cuBLAS kernel each).
Exit 1 on a wrong product, 2 without a GPU.
"""

import sys


def main() -> int:
    import torch
    import torch.distributed as dist

    if not torch.cuda.is_available():
        print("ranked_matmul: no CUDA device", file=sys.stderr)
        return 2
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    a = torch.full((1024, 1024), 1.0, dtype=torch.float16).cuda()
    b = torch.full((1024, 1024), 0.5, dtype=torch.float16).cuda()
    for _ in range(4 + 4 * rank):
        c = a @ b
    torch.cuda.synchronize()
    ok = float(c[0, 0].cpu()) == 512.0
    dist.barrier()
    dist.destroy_process_group()
    print(f"ranked_matmul: rank={rank} products={4 + 4 * rank} {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    code = main()
    if code:
        sys.exit(code)
