"""The hardening every container gets, the output cap, file packing and the language table (no Docker)."""

from __future__ import annotations

import base64
import io
import os
import tarfile
from pathlib import Path

import pytest

from agents.errors import SandboxError
from agents.types import FileSet, TestJob
from bot.config.sections import REPORT_FORMATS, ConfigError, LanguageConfig, SandboxConfig, load_config
from bot.sandbox.files import CHUNK_CHARS, pack, safe_path, staged
from bot.sandbox.hardening import LABEL, LABEL_PID, LABEL_PIDNS, MB, container_options, owner_gone, pid_namespace
from bot.sandbox.images import listed_as
from bot.sandbox.languages import (
    DEFAULT_LANGUAGES,
    OFFLINE_ENV,
    image_candidates,
    image_for,
    languages,
    prepared_tag,
)
from bot.sandbox.output import CappedOutput, SplitOutput
from bot.sandbox.sandbox import DockerSandbox, _needs_setup

PYTHON = DEFAULT_LANGUAGES["python"]


def options(network: str | None = None, **changes) -> dict:
    return container_options(SandboxConfig(**changes), "python", PYTHON, "img", network)


def test_container_is_locked_down():
    opts = options()
    assert opts["network_mode"] == "none"
    assert opts["read_only"] is True
    assert opts["cap_drop"] == ["ALL"]
    assert opts["security_opt"] == ["no-new-privileges"]
    # The keeper runs as a user of its own: the commands (65534) can neither kill it nor hide from a reset.
    assert opts["user"] == "65533:65533"
    assert container_options(SandboxConfig(user="65533:65533"), "python", PYTHON, "img", None)["user"] != \
        "65533:65533"
    assert opts["init"] is True
    assert "privileged" not in opts and "volumes" not in opts and "mounts" not in opts


def test_limits_come_from_the_config():
    opts = options(memory_mb=300, cpus=0.5, pids_limit=50, nofile_limit=99, file_size_mb=7, workdir_size_mb=11)
    assert opts["mem_limit"] == opts["memswap_limit"] == 300 * MB  # equal: no swap
    assert opts["nano_cpus"] == 500_000_000
    assert opts["pids_limit"] == 50
    ulimits = {u["Name"]: (u["Soft"], u["Hard"]) for u in opts["ulimits"]}
    assert ulimits["nofile"] == (99, 99)
    assert ulimits["fsize"] == (7 * MB, 7 * MB)
    # The work dir belongs to the keeper's user, sticky: the commands' user adds files, but cannot remove
    # or rename the user's tests there (``bot.sandbox.judge``).
    assert opts["tmpfs"]["/work"].startswith("size=11m,mode=1777,") and "uid=65533" in opts["tmpfs"]["/work"]


def test_setup_network_only_when_asked():
    on_setup_network = options(network="codegen-setup-1")
    assert on_setup_network["network_mode"] == "codegen-setup-1"
    assert on_setup_network["dns"] == ["127.0.0.1"]  # names are the proxy's business: DNS carries nothing out
    assert "dns" not in options()


def test_no_host_environment_reaches_the_container(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    assert options()["environment"] == dict(PYTHON.env)
    assert "sk-host-secret" not in repr(options())


def test_containers_are_labelled_with_their_owner():
    labels = options()["labels"]
    assert labels[LABEL] == "1" and labels[LABEL_PID] == str(os.getpid())
    assert labels[LABEL_PIDNS] == pid_namespace() and pid_namespace()


def test_only_a_process_that_sees_the_owners_pids_judges_it_gone():
    dead = {**options()["labels"], LABEL_PID: "999999999"}
    assert owner_gone(dead)
    assert owner_gone({k: v for k, v in dead.items() if k != LABEL_PIDNS})  # labelled before namespaces were
    # A bot in a container with host networking: the host's name, pids of its own. Its pid means nothing here.
    assert not owner_gone({**dead, LABEL_PIDNS: "another-boot-or-namespace/4026532999"})


def test_capped_output_keeps_head_and_tail_within_the_limit():
    capped = CappedOutput(100)
    capped.add(b"START" + b"x" * 1000)
    for _ in range(1000):
        capped.add(b"y" * 997)
    capped.add(b"THE END")
    text = capped.text()
    assert capped.truncated and text.startswith("START") and text.endswith("THE END")
    assert len(text.encode()) < 100 + 60  # the limit plus the cut note


def test_small_output_is_untouched():
    split = SplitOutput(1000)
    split.add(b"out\n", b"err\n")
    assert split.texts() == ("out\n", "err\n") and not split.truncated


@pytest.mark.parametrize("path", ["/etc/passwd", "../x", "a/../../x", "", "."])
def test_paths_outside_the_work_dir_are_refused(path):
    with pytest.raises(SandboxError):
        safe_path(path)


def test_packed_files_unpack_to_the_same_content():
    archive = tarfile.open(fileobj=io.BytesIO(pack({"a/b.py": "print('é')", "c.txt": ""})))
    assert {m.name: archive.extractfile(m).read().decode() for m in archive.getmembers()} == {
        "a/b.py": "print('é')", "c.txt": ""}


def test_large_uploads_are_split_into_argument_sized_chunks():
    files = {"big.txt": os.urandom(300_000).hex()}
    stage, final = staged(files, "/work", limit=10_000_000, command="pytest")
    chunks = [argv[-1] for argv in stage] + [final[-1]]
    assert len(chunks) > 1 and all(len(c) <= CHUNK_CHARS for c in chunks)
    assert base64.b64decode("".join(chunks)) == pack(files)
    assert final[3] == "pytest"  # run once the files are unpacked
    with pytest.raises(SandboxError, match="over the sandbox limit"):
        staged(files, "/work", limit=1000, command="pytest")


def test_config_languages_lay_over_the_defaults():
    mine = LanguageConfig(image="ruby:3", test_command="rake test")
    table = languages(SandboxConfig(languages={"ruby": mine, "python": mine}))
    assert table["ruby"] is mine and table["python"] is mine and table["go"] is DEFAULT_LANGUAGES["go"]


@pytest.mark.parametrize(("entry", "key"), [
    (LanguageConfig(test_command="x"), "sandbox.languages.ruby: no image"),
    (LanguageConfig(image="ruby:3"), "sandbox.languages.ruby.test_command"),
    (LanguageConfig(image="ruby:3", test_command="x", report_format="xml"), "sandbox.languages.ruby.report_format"),
])
def test_bad_language_entries_name_their_key(entry, key):
    with pytest.raises(ConfigError, match=key):
        SandboxConfig(languages={"ruby": entry})


@pytest.mark.parametrize("command", ["''", "'   '"])
def test_an_empty_test_command_is_refused_when_the_config_is_read(tmp_path, command):
    path = tmp_path / "config.toml"
    path.write_text(f"[sandbox.languages.python]\nimage = 'python:3.12-slim'\ntest_command = {command}\n")
    with pytest.raises(ConfigError, match=r"sandbox\.languages\.python\.test_command: empty"):
        load_config(path)


async def test_disabled_sandbox_refuses_to_run():
    sandbox = DockerSandbox(SandboxConfig(enabled=False))
    with pytest.raises(SandboxError, match="disabled"):
        await sandbox.run(TestJob("python", FileSet({"test_a.py": ""})))


def test_image_choice(monkeypatch):
    monkeypatch.delenv(OFFLINE_ENV, raising=False)
    go = DEFAULT_LANGUAGES["go"]
    assert image_for(go, SandboxConfig()) == "golang:1.23"
    assert image_for(go, SandboxConfig(use_offline_images=True)) == go.offline_image
    assert image_for(PYTHON, SandboxConfig()) == prepared_tag(PYTHON)  # official image + pytest
    # Without a switch, the registry's image first and the offline one second: whichever is present is used.
    assert image_candidates(go, SandboxConfig()) == ["golang:1.23", go.offline_image]
    monkeypatch.setenv(OFFLINE_ENV, "1")
    assert image_for(go, SandboxConfig()) == go.offline_image
    assert image_candidates(go, SandboxConfig()) == [go.offline_image]  # the switch still forces it


@pytest.mark.parametrize("reference, listed", [
    ("python", "python:latest"),
    ("python:3.12-slim", "python:3.12-slim"),
    ("docker.io/library/python:3.12", "python:3.12"),
    ("docker.io/python", "python:latest"),
    ("index.docker.io/library/golang:1.23", "golang:1.23"),
    ("codegen-chat-sandbox/go:bookworm", "codegen-chat-sandbox/go:bookworm"),
    ("docker.io/codegen-chat-sandbox/go:bookworm", "codegen-chat-sandbox/go:bookworm"),
    ("registry.example:5000/team/go", "registry.example:5000/team/go:latest"),
    ("ghcr.io/library/tool:1", "ghcr.io/library/tool:1"),  # only Docker Hub's own "library/" is left out
    ("python@sha256:" + "0" * 64, None),  # a digest is not a tag: the engine is asked about it
    ("sha256:" + "0" * 64, None),  # nor an image's id
    ("0123456789ab", None),
])
def test_an_image_reference_is_looked_up_as_the_engines_list_names_it(reference, listed):
    assert listed_as(reference) == listed


def test_every_default_language_is_complete():
    for name, language in DEFAULT_LANGUAGES.items():
        assert language.image and language.offline_image and language.test_command, name
        assert language.report_format in REPORT_FORMATS, name


def test_setup_runs_only_when_its_files_are_there():
    assert _needs_setup(PYTHON, {"requirements.txt": "", "test_a.py": ""})
    assert _needs_setup(PYTHON, {"sub/requirements.txt": ""})
    assert not _needs_setup(PYTHON, {"test_a.py": ""})
    assert not _needs_setup(DEFAULT_LANGUAGES["c"], {"requirements.txt": ""})


def test_sandbox_section_loads_strictly(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_text('[sandbox]\nuse_offline_images = true\nmemory_mb = 300\n\n[sandbox.languages.ruby]\n'
                    'image = "ruby:3"\ntest_command = "rake test"\nenv = { HOME = "/tmp" }\n'
                    'setup_when = ["Gemfile"]\n')
    sandbox = load_config(path).sandbox
    assert sandbox.use_offline_images and sandbox.memory_mb == 300
    assert sandbox.languages["ruby"] == LanguageConfig(image="ruby:3", test_command="rake test",
                                                       env={"HOME": "/tmp"}, setup_when=("Gemfile",))
    path.write_text("[sandbox.languages.ruby]\nimgae = 'ruby:3'\n")
    with pytest.raises(ConfigError, match=r"sandbox\.languages\.ruby\.imgae"):
        load_config(path)
