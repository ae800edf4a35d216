"""torchrun support: one process per device (or CPU process on gloo), DDP around the model."""

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def main(self) -> bool:
        return self.rank == 0


def init_world() -> World:
    """Read torchrun's environment; a plain process is a world of one."""
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) == 1:
        return World(device=torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, local = dist.get_rank(), int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device(f"cuda:{local}") if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    return World(rank=rank, size=dist.get_world_size(), device=device)


def all_reduce_sum(value: float, world: World) -> float:
    if world.size == 1:
        return value
    tensor = torch.tensor([value], dtype=torch.float64, device=world.device)
    dist.all_reduce(tensor)
    return float(tensor.item())


def close_world(world: World) -> None:
    if world.size > 1 and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
