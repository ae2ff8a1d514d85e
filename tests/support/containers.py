"""The container tier's runtime and image: podman with runc, and a small image built here.

No registry is reachable, so the image is imported from a tarball written here: a root
filesystem of a few folders, the usual merged-/usr symlinks, /etc/passwd and the fake engines
under /engine. Python comes from this machine's /usr, mounted read-only (`launch.volumes`), so the
image is a few kilobytes, builds in about two seconds and is the same bytes every time (its tag is
the tarball's hash: a second build is a no-op).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ENGINES = HERE / "fake_engines"
# runc, not crun (crun fails on this kernel's hybrid cgroups and on setrlimit); cgroupfs, since
# there is no systemd; no default ulimits (setting them fails inside an unprivileged container).
CONF = (
    '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n'
)
DIRS = ("dev", "engine", "etc", "proc", "root", "run", "sys", "tmp", "usr", "var", "var/tmp")
LINKS = (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64"), ("sbin", "usr/sbin"))
LABEL = "evalrun.owner"


def configure(folder: Path) -> str | None:
    """Point podman at the tier's containers.conf (unless CONTAINERS_CONF is set) and check it
    works; the reason it does not, else None."""
    if not shutil.which("podman"):
        return "podman is not installed (apt-get install podman runc)"
    if not os.environ.get("CONTAINERS_CONF"):
        conf = folder / "containers.conf"
        conf.write_text(CONF)
        os.environ["CONTAINERS_CONF"] = str(conf)
    done = subprocess.run(["podman", "info"], capture_output=True, text=True, timeout=60)
    return None if done.returncode == 0 else f"podman info failed: {done.stderr.strip()[:200]}"


def rootfs_tar(extra: dict[str, bytes] | None = None) -> bytes:
    """The image's root filesystem as a tarball (fixed owners, modes and times)."""
    files = {
        "etc/passwd": b"root:x:0:0:root:/root:/bin/sh\n",
        "etc/group": b"root:x:0:\n",
        **{f"engine/{p.name}": p.read_bytes() for p in sorted(ENGINES.glob("*.py"))},
        **(extra or {}),
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in DIRS:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name.endswith("tmp") else 0o755
            tar.addfile(info)
        for name, target in LINKS:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def build_image(folder: Path, name: str = "evalrun-test-engine") -> str:
    """Import the tarball as NAME:<hash> (once: an image with that tag is reused); its reference."""
    data = rootfs_tar()
    ref = f"localhost/{name}:{hashlib.sha256(data).hexdigest()[:12]}"
    if subprocess.run(["podman", "image", "exists", ref]).returncode != 0:
        tar = folder / "rootfs.tar"
        tar.write_bytes(data)
        subprocess.run(["podman", "import", "-q", str(tar), ref], check=True, capture_output=True)
    return ref


def build_releases(folder: Path, tags: dict[str, dict[str, bytes]]) -> str:
    """Import one image per tag (TAG -> extra files of its root filesystem) under one repository
    named by their content; the repository, each tag's image reference being REPO:TAG."""
    tars = {tag: rootfs_tar(extra) for tag, extra in tags.items()}
    digest = hashlib.sha256(b"".join(tars[t] for t in sorted(tars))).hexdigest()[:12]
    repo = f"localhost/evalrun-test-release-{digest}"
    for tag, data in tars.items():
        ref = f"{repo}:{tag}"
        if subprocess.run(["podman", "image", "exists", ref]).returncode != 0:
            tar = folder / f"rootfs-{tag}.tar"
            tar.write_bytes(data)
            subprocess.run(["podman", "import", "-q", str(tar), ref], check=True,
                           capture_output=True)  # fmt: skip
    return repo


def containers(marker: str = LABEL) -> list[str]:
    """`podman ps -a` rows (id, name, status) of the containers labelled by evalrun."""
    done = subprocess.run(
        ["podman", "ps", "-a", "--filter", f"label={marker}", "--format",
         "{{.ID}} {{.Names}} {{.Status}}"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return [line for line in done.stdout.splitlines() if line.strip()]


def wait_no_containers(timeout: float = 30.0) -> list[str]:
    import time

    deadline = time.monotonic() + timeout
    while (left := containers()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left
