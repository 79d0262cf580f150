"""The sandbox's language table: the built-in languages' runs, with ``[sandbox.languages]`` laid over them,
and the same config read into the one ``Languages`` every layer asks (``registry``).

Each built-in language is described once, in its module of ``agents.language`` (its files, its tests, its
image and commands); adding a language is one more module there, or one entry in config.toml: an image,
commands and a report format, with its extensions and test-file patterns.
Commands run with ``sh -c`` as an unprivileged user, with a read-only root: everything a tool writes
(caches, build output, installed dependencies) goes to /work or /tmp, both small tmpfs mounts.
The setup command also sees SANDBOX_NETWORK=1 or 0: whether it has a network.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re

from agents.errors import SandboxError
from agents.language import BUILT_IN, Language, Languages, TestRun
from agents.language.reports import REPORT_FORMATS as READ_AS
from agents.language.sandbox_env import OFFLINE_PREFIX
from bot.config.sections import ConfigError, LanguageConfig, SandboxConfig, language_problem

OFFLINE_ENV = "CODEGEN_SANDBOX_OFFLINE"  # "1": use the offline images whatever the config says


def _as_config(language: Language, run: TestRun) -> LanguageConfig:
    """A built-in language's run in the shape the sandbox reads (the config's)."""
    fields = {f.name: getattr(run, f.name) for f in dataclasses.fields(run)}
    return LanguageConfig(**{**fields, "env": dict(run.env)}, extensions=language.extensions,
                          test_files=language.test_files, usual_file=language.usual_file, title=language.title,
                          aliases=language.aliases)


DEFAULT_LANGUAGES: dict[str, LanguageConfig] = {
    language.name: _as_config(language, language.run) for language in BUILT_IN if language.run
}


def registry(config: SandboxConfig) -> Languages:
    """The languages a run knows: the built-in ones, with the config's entries laid over them by name (a new
    one's files are recognised, named and counted like a built-in one's). Bad entries refused."""
    return BUILT_IN.laid_over(described(name, entry) for name, entry in checked(config).items())


def described(name: str, entry: LanguageConfig) -> Language:
    """A ``[sandbox.languages.NAME]`` entry as a language description (empty fields: the built-in's own)."""
    run = TestRun(**{f.name: getattr(entry, f.name) for f in dataclasses.fields(TestRun)})
    return Language(name=name, title=entry.title, extensions=entry.extensions, test_files=entry.test_files,
                    usual_file=entry.usual_file, aliases=entry.aliases, run=run)


REPORT_FORMATS = tuple(READ_AS)  # how a runner's output is read (its counts: bot.sandbox.results)


def languages(config: SandboxConfig) -> dict[str, LanguageConfig]:
    """The built-in table with the config's entries laid over it, name by name."""
    return {**DEFAULT_LANGUAGES, **checked(config)}


def language_of(name: str, known: dict[str, LanguageConfig]) -> LanguageConfig:
    """``known[name]``, or ``SandboxError`` naming the languages there are and how to add one."""
    try:
        return known[name]
    except KeyError:
        raise SandboxError(f"no sandbox is configured for the language {name!r} (known: {', '.join(sorted(known))}); "
                           "add [sandbox.languages." + name + "] to config.toml") from None


def checked(config: SandboxConfig) -> dict[str, LanguageConfig]:
    """The config's language entries, each checked when the config was read (``SandboxConfig``); checked
    again here for a config made in code."""
    for name, language in config.languages.items():
        key, problem = language_problem(language)
        if problem:
            raise ConfigError(f"sandbox.languages.{name}{key}: {problem}")
    return dict(config.languages)


def use_offline(config: SandboxConfig) -> bool:
    return config.use_offline_images or os.environ.get(OFFLINE_ENV, "") == "1"


def image_for(language: LanguageConfig, config: SandboxConfig) -> str:
    """The image a run prefers: offline when asked for, else the configured one (prepared when it says so)."""
    return image_candidates(language, config)[0]


def image_candidates(language: LanguageConfig, config: SandboxConfig) -> list[str]:
    """The images a run may use, best first: the registry's (prepared when it says so), then the offline
    one; only the offline one when asked for (``use_offline_images``, ``CODEGEN_SANDBOX_OFFLINE=1``)."""
    registry = prepared_tag(language) if language.image_prepare else language.image
    if use_offline(config) and language.offline_image:
        return [language.offline_image]
    return [image for image in (registry, language.offline_image) if image]


def prepared_tag(language: LanguageConfig) -> str:
    """Where `sandbox build` puts ``image`` plus its preparation step (a new step, a new tag)."""
    digest = hashlib.sha256(f"{language.image}\n{language.image_prepare}".encode()).hexdigest()[:12]
    name = re.sub(r"[^a-z0-9_.-]", "-", language.image.lower())[:80]
    return f"{OFFLINE_PREFIX}/prepared:{name}-{digest}"


def with_offline(config: SandboxConfig) -> SandboxConfig:
    """The same config, switched to the offline images (``--offline`` on the command line)."""
    return dataclasses.replace(config, use_offline_images=True)
