"""Preparing the language images: pulled from a registry, or built offline from Debian packages.

Offline: one debootstrap ``minbase`` root (python3 + pytest, enough for Python and Bash) is imported
as the base image; every other language is ``docker build`` FROM that base plus its Debian packages.
No registry is involved. Images that already exist are skipped, so a second build costs nothing.
Everything here blocks: callers run it in a worker thread.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable

import docker
from docker.errors import APIError, BuildError, ImageNotFound

from agents.errors import SandboxError
from bot.config.sections import LanguageConfig, SandboxConfig
from bot.sandbox.languages import image_candidates, image_for, prepared_tag

BASE_PACKAGES = ("python3", "python3-pytest", "python3-pip", "ca-certificates")
IMAGE_ENV = ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8")

Log = Callable[[str], None]
_IMAGE_ID = re.compile(r"[0-9a-f]{12,64}")  # an image named by its id, as `docker images -q` prints it


# How a pull reads when no registry answers (no DNS, no route, a firewall), as opposed to a wrong name.
_UNREACHABLE = ("dial tcp", "no such host", "lookup ", "connection refused", "network is unreachable",
                "i/o timeout", "client.timeout", "tls handshake timeout", "server misbehaving")


class RegistryUnreachable(SandboxError):
    """No image registry answered: the offline images are the way."""


def image_present(client: docker.DockerClient, name: str) -> bool:
    try:
        client.images.get(name)
        return True
    except ImageNotFound:
        return False


def listed_images(client: docker.DockerClient) -> frozenset[str]:
    """Every name:tag the engine's images carry, in one call (a run checks all its languages' images at once), each
    as ``listed_as`` names it (an engine may list ``docker.io/library/python:3`` for ``python:3``)."""
    tags = (listed_as(tag) for image in client.api.images() for tag in image.get("RepoTags") or ())
    return frozenset(tag for tag in tags if tag)


def listed_as(image: str) -> str | None:
    """How the engine's image list names the reference ``image``: the tag made explicit (``:latest``), Docker Hub's
    own prefixes left out (``docker.io/library/python:3`` is listed as ``python:3``); None for a reference by
    digest or by id, which the list does not show as a tag."""
    if "@" in image or image.startswith("sha256:") or _IMAGE_ID.fullmatch(image):
        return None
    if ":" not in image.rsplit("/", 1)[-1]:
        image += ":latest"
    for prefix in ("docker.io/", "index.docker.io/"):
        image = image.removeprefix(prefix)
    return image.removeprefix("library/") if image.count("/") == 1 else image


def present_image(client: docker.DockerClient, language: LanguageConfig, config: SandboxConfig,
                  listed: frozenset[str] | None = None) -> str | None:
    """The first of the language's images (registry's, then offline) that this engine has, or None. With
    ``listed`` (``listed_images``), a name the list shows is present without asking the engine; one it does not show
    is taken as missing, except the last choice, which the engine is asked about before the language goes without
    (an engine that names its images otherwise still runs the tests)."""
    candidates = image_candidates(language, config)

    def present(image: str) -> bool:
        if listed is None or (name := listed_as(image)) is None:
            return image_present(client, image)
        return name in listed or (image == candidates[-1] and image_present(client, image))

    return next((image for image in candidates if present(image)), None)


def missing_image(name: str, language: LanguageConfig, config: SandboxConfig) -> SandboxError:
    wanted = " or ".join(image_candidates(language, config))
    return SandboxError(f"no {name} sandbox image is present ({wanted}): run `codegen-chat sandbox build` "
                        "(it builds the images from Debian packages when no registry answers)")


def build_offline(client: docker.DockerClient, config: SandboxConfig,
                  chosen: Iterable[tuple[str, LanguageConfig]], log: Log = print) -> dict[str, float]:
    """Build the base and each chosen language's offline image; seconds spent per image built."""
    spent: dict[str, float] = {}
    if not image_present(client, config.base_image):
        started = time.monotonic()
        build_base(client, config, log)
        spent[config.base_image] = time.monotonic() - started
    for name, language in chosen:
        tag = image_for(language, config)
        if image_present(client, tag):
            log(f"{name}: {tag} already present")
            continue
        if not language.offline_packages:
            raise SandboxError(f"{name}: the offline image {tag} is missing and the language names no "
                               "offline_packages to build it from")
        log(f"{name}: building {tag} ({', '.join(language.offline_packages)})")
        started = time.monotonic()
        layer_packages(client, config.base_image, tag, language.offline_packages)
        spent[tag] = time.monotonic() - started
    return spent


def build_base(client: docker.DockerClient, config: SandboxConfig, log: Log = print) -> None:
    """debootstrap a minimal Debian root and ``docker import`` it as the base image."""
    if shutil.which("debootstrap") is None:
        raise SandboxError("debootstrap is not installed: apt-get install debootstrap (as root) first")
    log(f"base: debootstrap {config.debian_suite} -> {config.base_image}")
    with tempfile.TemporaryDirectory(prefix="codegen-rootfs-") as root:
        _check_run(["debootstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
                    config.debian_suite, root, config.debian_mirror])
        # Package caches and lists are dead weight in an image that never installs offline.
        _check_run(["sh", "-c", f"rm -rf {root}/var/cache/apt/archives/*.deb {root}/var/lib/apt/lists/*"])
        _import_tree(client, root, config.base_image)


def _import_tree(client: docker.DockerClient, root: str, tag: str) -> None:
    repository, _, version = tag.rpartition(":")
    with subprocess.Popen(["tar", "-C", root, "--numeric-owner", "-c", "."], stdout=subprocess.PIPE) as tar:
        changes = [f"ENV {item}" for item in IMAGE_ENV] + ['CMD ["/bin/bash"]']
        client.api.import_image(src=tar.stdout, repository=repository, tag=version, changes=changes,
                                stream_src=True)
    if tar.returncode != 0:
        raise SandboxError(f"packing the debootstrap root for {tag} failed (tar exit {tar.returncode})")


def layer_packages(client: docker.DockerClient, base: str, tag: str, packages: Iterable[str]) -> None:
    """``docker build`` FROM the local base with Debian packages added; no registry is asked."""
    names = " ".join(packages)
    dockerfile = (
        f"FROM {base}\n"
        "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
        f"{names} && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb\n"
    )
    _docker_build(client, dockerfile, tag)


def prepare_online(client: docker.DockerClient, name: str, language: LanguageConfig, log: Log = print) -> None:
    """Pull the language's image when missing, then bake its preparation step into a local tag."""
    if not image_present(client, language.image):
        log(f"{name}: pulling {language.image}")
        try:
            client.images.pull(language.image)
        except APIError as error:
            why = str(error.explanation or error)
            if any(sign in why.lower() for sign in _UNREACHABLE):
                raise RegistryUnreachable(f"{name}: no registry answered for {language.image} ({why})") from None
            raise SandboxError(f"{name}: cannot pull {language.image} ({why}): check the image name and the "
                               "registry, or build offline with `codegen-chat sandbox build --offline`") from None
    if not language.image_prepare:
        log(f"{name}: {language.image} ready")
        return
    tag = prepared_tag(language)
    if image_present(client, tag):
        log(f"{name}: {tag} already present")
        return
    log(f"{name}: preparing {tag}")
    _docker_build(client, f"FROM {language.image}\nRUN {language.image_prepare}\n", tag)


def _docker_build(client: docker.DockerClient, dockerfile: str, tag: str) -> None:
    try:
        client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, pull=False, rm=True,
                            forcerm=True)
    except BuildError as error:
        tail = "\n".join(str(line.get("stream", line.get("error", ""))).rstrip()
                         for line in list(error.build_log)[-15:])
        raise SandboxError(f"building {tag} failed: {error.msg}\n{tail}") from None


def _check_run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-2000:]
        raise SandboxError(f"{argv[0]} failed (exit {done.returncode}): {tail}")

