"""The sandbox base image, built without a registry: a debootstrap rootfs, imported into Docker.

The tag is a digest of the recipe (suite, packages, user), so an existing image is reused and a changed
recipe builds a new one. Where a registry is reachable, the Dockerfile beside this module builds the same.
"""

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors

from trajforge.schemas.hashing import config_hash

REPOSITORY = "trajforge/sandbox"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = (
    "bash",
    "coreutils",
    "python3",
    "python3-pytest",
    "git",
    "curl",
    "tmux",
    "procps",
    "jq",
    "bc",
    "sqlite3",
    "file",
    "make",
    "zip",
    "unzip",
    "xz-utils",
    "less",
    "ca-certificates",
)
# Installed by apt inside the new root after debootstrap: npm's dependencies name virtual packages, which
# debootstrap's resolver cannot follow. Stdio MCP servers from npm run with Debian's node and npx.
APT_PACKAGES = ("nodejs", "npm")
AGENT_UID = 1000
DOCKERFILE = Path(__file__).parent / "images" / "Dockerfile"


class ImageBuildError(RuntimeError):
    pass


@dataclass(frozen=True)
class ImageRecipe:
    suite: str = "bookworm"
    packages: tuple[str, ...] = PACKAGES
    apt_packages: tuple[str, ...] = APT_PACKAGES
    extra: dict = field(default_factory=dict)

    @property
    def tag(self) -> str:
        recipe = {"suite": self.suite, "packages": sorted(self.packages), "uid": AGENT_UID, **self.extra}
        if self.apt_packages:
            recipe["apt_packages"] = sorted(self.apt_packages)
        return f"{REPOSITORY}:{config_hash(recipe)}"


def find_image(client: docker.DockerClient, tag: str):
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def image_digest(client: docker.DockerClient, tag: str) -> str:
    """The image id (sha256 of its config): what a trajectory records as the environment's image digest."""
    return client.images.get(tag).id


def ensure_base_image(
    client: docker.DockerClient | None = None,
    recipe: ImageRecipe = ImageRecipe(),
    use_dockerfile: bool = False,
    log=print,
) -> str:
    """Return the tag of the base image, building it first when it does not exist yet."""
    client = client or docker.from_env()
    if find_image(client, recipe.tag) is not None:
        log(f"sandbox image {recipe.tag} exists; reusing it")
        return recipe.tag
    if use_dockerfile:
        _build_from_dockerfile(recipe, log)
    else:
        _build_from_debootstrap(recipe, log)
    client.images.get(recipe.tag).tag(REPOSITORY, "latest")
    log(f"sandbox image {recipe.tag} built ({image_digest(client, recipe.tag)})")
    return recipe.tag


def _run(cmd: list[str], **kwargs) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        tail = (result.stdout[-1500:] + "\n" + result.stderr[-1500:]).strip()
        raise ImageBuildError(f"{' '.join(cmd[:3])} ... failed ({result.returncode}):\n{tail}")


def _build_from_debootstrap(recipe: ImageRecipe, log) -> None:
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("debootstrap is not installed (apt-get install debootstrap), or use --dockerfile")
    with tempfile.TemporaryDirectory(prefix="trajforge-rootfs-") as tmp:
        root = Path(tmp) / "rootfs"
        log(f"debootstrap --variant=minbase {recipe.suite} (about a minute)")
        _run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(recipe.packages)}",
                recipe.suite,
                str(root),
                MIRROR,
            ]
        )
        if recipe.apt_packages:
            log(f"apt-get install {' '.join(recipe.apt_packages)} in the new root (a few minutes)")
            _run(
                [
                    "chroot",
                    str(root),
                    "apt-get",
                    "install",
                    "-y",
                    "-q",
                    "--no-install-recommends",
                    "-o",
                    "Dpkg::Options::=--force-unsafe-io",  # a throwaway root: no fsync per file
                    *recipe.apt_packages,
                ],
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LANG": "C.UTF-8"},
            )
        import_rootfs(root, recipe.tag, log)


def import_rootfs(root: Path, tag: str, log=print) -> None:
    """The finished root as an image: the agent user added, apt's caches dropped, `docker import`ed."""
    _add_agent_user(root)
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        shutil.rmtree(root / junk, ignore_errors=True)
    log(f"docker import -> {tag}")
    tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
    changes = ["USER agent", "WORKDIR /work", "ENV HOME=/work", 'CMD ["bash"]']
    cmd = ["docker", "import", *[a for c in changes for a in ("--change", c)], "-", tag]
    _run(cmd, stdin=tar.stdout)
    tar.wait()


def _add_agent_user(root: Path) -> None:
    with open(root / "etc/passwd", "a") as f:
        f.write(f"agent:x:{AGENT_UID}:{AGENT_UID}:sandbox agent:/work:/bin/bash\n")
    with open(root / "etc/group", "a") as f:
        f.write(f"agent:x:{AGENT_UID}:\n")
    (root / "work").mkdir(exist_ok=True)


def _build_from_dockerfile(recipe: ImageRecipe, log) -> None:
    log(f"docker build {DOCKERFILE.parent} -> {recipe.tag}")
    _run(
        [
            "docker",
            "build",
            "--build-arg",
            f"PACKAGES={' '.join(recipe.packages + recipe.apt_packages)}",
            "-t",
            recipe.tag,
            str(DOCKERFILE.parent),
        ]
    )
