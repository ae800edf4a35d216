"""Isolated containers for episodes: no network, no capabilities, a non-root user, limits, a run label."""

import logging
import os
from dataclasses import dataclass

import docker
import docker.errors

RUN_LABEL = "trajforge.run"
OWNER_LABEL = "trajforge.owner-pid"
log = logging.getLogger(__name__)
NETWORKS = {"none": "none", "allow": "bridge"}  # a suite's `network:` -> Docker's network mode


@dataclass(frozen=True)
class Limits:
    pids: int = 256
    memory: str = "512m"
    cpus: float = 1.0
    workspace: str = "64m"  # the writable /work (tmpfs); the root filesystem is read-only
    tmp: str = "32m"


def start_container(
    client: docker.DockerClient,
    image: str,
    run_id: str,
    limits: Limits,
    owner: int,
    network: str = "none",
    read_only_mounts: dict[str, str] | None = None,
    environment: dict[str, str] | None = None,
):
    """A fresh container idling in `sleep`, for `docker exec`. `network`: none, or allow (Docker's default
    bridge); `read_only_mounts` maps host folders to where the container sees them, read-only."""
    if network not in NETWORKS:
        raise ValueError(f"network must be one of {', '.join(NETWORKS)}, got {network!r}")
    return client.containers.run(
        image,
        command=["sleep", "infinity"],
        detach=True,
        init=True,
        user="1000:1000",
        working_dir="/work",
        hostname="sandbox",  # not the container id: the same episode gives the same screens in every run
        # No .pyc files: an edit within the same second as an import (same size, same mtime) would be ignored.
        environment={
            "HOME": "/work",
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            **(environment or {}),
        },
        network_mode=NETWORKS[network],
        volumes={host: {"bind": target, "mode": "ro"} for host, target in (read_only_mounts or {}).items()},
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        read_only=True,
        tmpfs={
            "/work": f"size={limits.workspace},uid=1000,gid=1000,mode=0755,exec",
            "/tmp": f"size={limits.tmp},mode=1777,exec",
        },
        pids_limit=limits.pids,
        mem_limit=limits.memory,
        memswap_limit=limits.memory,  # no swap: a memory hog meets the OOM killer, not the disk
        nano_cpus=int(limits.cpus * 1e9),
        labels={RUN_LABEL: run_id, OWNER_LABEL: str(owner)},
    )


def reap_stale(client: docker.DockerClient) -> int:
    """Remove sandbox containers whose owning process is gone (left by a crashed or killed run)."""
    return _remove(client, [RUN_LABEL], lambda owner: not (owner and _pid_alive(owner)))


def remove_owned(client: docker.DockerClient, owner: int) -> int:
    """Remove the sandbox containers that the process `owner` started and did not close (its own clean-up)."""
    return _remove(client, [RUN_LABEL, f"{OWNER_LABEL}={owner}"])


def _remove(client: docker.DockerClient, labels: list[str], owner_gone=lambda owner: True) -> int:
    """Remove the containers carrying every one of `labels` whose owner pid `owner_gone` says may go."""
    removed = 0
    # ignore_removed: another run's container may go between the listing and its inspection (NotFound otherwise)
    for container in client.containers.list(all=True, filters={"label": labels}, ignore_removed=True):
        if not owner_gone(int(container.labels.get(OWNER_LABEL) or 0)):
            continue
        try:
            container.remove(force=True)
            removed += 1
        except docker.errors.APIError as exc:
            log.warning("could not remove container %s: %s", container.short_id, exc)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
