"""Two (or more) ranks, one GPU each, meeting through NCCL: rank r runs 4 + 4 * r products on
GPU LOCAL_RANK, then one all-reduce of a float32 vector.

Launched by torchrun with one process per GPU. Inputs are made on the CPU and copied over, so
the kernels are the products (one cuBLAS kernel each) and NCCL's. Each rank prints the pid, the
UUID of the GPU it ran on and its counts, for the test to match against NVML's view.
Exit 1 on a wrong product or sum, 2 without enough GPUs.
"""

import os
import sys


def main() -> int:
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.device_count() <= local_rank:
        print(f"ranked_nccl: rank {local_rank} has no GPU of its own", file=sys.stderr)
        return 2
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, world = dist.get_rank(), dist.get_world_size()
    a = torch.full((1024, 1024), 1.0, dtype=torch.float16).cuda()
    b = torch.full((1024, 1024), 0.5, dtype=torch.float16).cuda()
    products = 4 + 4 * rank
    for _ in range(products):
        c = a @ b
    total = torch.full((1 << 20,), float(rank + 1)).cuda()
    dist.all_reduce(total)
    torch.cuda.synchronize()
    ok = float(c[0, 0].cpu()) == 512.0 and float(total[-1].cpu()) == world * (world + 1) / 2
    uuid = torch.cuda.get_device_properties(local_rank).uuid
    dist.destroy_process_group()
    print(f"ranked_nccl: rank={rank} pid={os.getpid()} gpu={uuid} products={products} "
          f"{'PASS' if ok else 'FAIL'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    code = main()
    if code:
        sys.exit(code)
