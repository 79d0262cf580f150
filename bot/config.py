"""Configuration: ``config.toml`` read once into typed, frozen objects; secrets only from the environment.

Every default below is the value a fresh install runs with; ``config.toml`` in the repo spells them out.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agents.errors import CodegenError
from agents.manager import Budget
from agents.types import Role
from bot.settings import SettingsError, build

CONFIG_ENV = "CODEGEN_CONFIG"
DEFAULT_CONFIG_FILE = "config.toml"
DEFAULT_DB_PATH = "~/.local/share/codegen-chat/codegen.sqlite3"


class ConfigError(CodegenError):
    """The configuration cannot be used. The message names the key, the problem and the fix."""


@dataclass(frozen=True)
class LLMConfig:
    base_url: str = ""  # empty: OPENAI_BASE_URL from the environment, else OpenAI itself
    request_timeout_s: float = 120.0
    max_retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0


@dataclass(frozen=True)
class AgentSettings:
    """Model settings of one role; unset values come from ``[agents.default]``."""

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None


@dataclass(frozen=True)
class ResolvedAgentSettings:
    model: str
    temperature: float
    max_tokens: int


DEFAULT_AGENT = ResolvedAgentSettings(model="gpt-4o-mini", temperature=0.2, max_tokens=4096)


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input_per_million: float = 0.0
    output_per_million: float = 0.0


@dataclass(frozen=True)
class InputConfig:
    max_task_chars: int = 20_000
    max_attachment_bytes: int = 256_000
    max_attachments: int = 10


@dataclass(frozen=True)
class StorageConfig:
    path: str = DEFAULT_DB_PATH


@dataclass(frozen=True)
class LimitsConfig:
    max_concurrent_runs: int = 8
    max_runs_per_user: int = 2
    max_queued_runs: int = 100
    max_queued_runs_per_user: int = 10


@dataclass(frozen=True)
class CheckinConfig:
    """Publishing the result as a GitHub Gist (``GITHUB_TOKEN``), or the fallback when GitHub is not set up."""

    publish_failed: bool = True  # publish a run whose tests failed, clearly marked (the Manager decides)
    public: bool = False  # secret Gists unless a team opts in
    github_api_url: str = "https://api.github.com"  # GitHub Enterprise Server: https://HOST/api/v3
    timeout_s: float = 30.0  # one HTTP request
    max_retries: int = 3  # after a 5xx, a network error or a rate limit
    max_file_bytes: int = 1_000_000  # larger files are left out of the Gist with a note (the API truncates them)
    backoff_s: float = 1.0  # first wait before a retry; doubles each time unless GitHub says how long
    max_wait_s: float = 60.0  # longest wait honoured; a rate limit resetting later falls back at once
    write_interval_s: float = 1.0  # GitHub asks for a pause between writes to avoid its secondary rate limit

    def __post_init__(self) -> None:
        if not self.github_api_url.startswith(("https://", "http://")):
            raise SettingsError("checkin.github_api_url", "must start with https://", "e.g. https://HOST/api/v3")
        for name in ("timeout_s", "max_file_bytes"):
            if getattr(self, name) <= 0:
                raise SettingsError(f"checkin.{name}", f"must be greater than 0, got {getattr(self, name)}")
        for name in ("max_retries", "backoff_s", "max_wait_s", "write_interval_s"):
            if getattr(self, name) < 0:
                raise SettingsError(f"checkin.{name}", f"must be 0 or more, got {getattr(self, name)}")


@dataclass(frozen=True)
class LanguageConfig:
    """How one language's tests run: an image, where files go, the commands, how to read results.

    Commands run with ``sh -c`` inside the container, in ``workdir``. ``setup_command`` runs first,
    only when one of ``setup_when`` exists among the files (network per ``[sandbox] setup_network``).
    ``report_format`` is one of pytest, go, cargo, tap, junit, exit-code (see bot/sandbox/results.py).
    """

    image: str = ""  # pulled by `sandbox build`; the official language image by default
    image_prepare: str = ""  # run once by `sandbox build` on top of `image` (e.g. install the runner)
    offline_image: str = ""  # built by `sandbox build --offline`; used when use_offline_images
    offline_packages: tuple[str, ...] = ()  # Debian packages layered on the offline base image
    extensions: tuple[str, ...] = ()
    workdir: str = "/work"
    env: dict[str, str] = field(default_factory=dict)  # the only environment the container sees
    setup_when: tuple[str, ...] = ()  # file names that call for the setup step
    setup_command: str = ""
    test_command: str = ""
    report_format: str = "exit-code"


DEFAULT_SANDBOX_BASE_IMAGE = "codegen-chat-sandbox/base:bookworm"
DEFAULT_DEBIAN_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class SandboxConfig:
    """Limits and images of the test sandbox. ``languages`` lays over the built-in table by name."""

    enabled: bool = True
    docker_host: str = ""  # empty: DOCKER_HOST from the environment, else the local socket
    use_offline_images: bool = False
    timeout_s: float = 120.0
    setup_timeout_s: float = 300.0
    setup_network: bool = True  # network during the dependency setup step; never during tests
    memory_mb: int = 512  # swap is off: memory and memory+swap are the same
    cpus: float = 1.0
    pids_limit: int = 256
    nofile_limit: int = 1024
    file_size_mb: int = 64  # largest file a test may write
    workdir_size_mb: int = 256  # tmpfs holding the run's files
    tmp_size_mb: int = 256  # tmpfs at /tmp (HOME, caches, build output)
    max_output_bytes: int = 1_000_000  # per run, stdout and stderr together; head and tail kept
    max_upload_bytes: int = 20_000_000  # the files of one job
    user: str = "65534:65534"
    concurrency: int = 4  # containers running tests at once; more runs wait their turn
    warm_pool: bool = False
    warm_pool_size: int = 1  # idle pre-started containers per language, each used once
    base_image: str = DEFAULT_SANDBOX_BASE_IMAGE  # the debootstrap image offline images build on
    debian_mirror: str = DEFAULT_DEBIAN_MIRROR
    debian_suite: str = "bookworm"
    languages: dict[str, LanguageConfig] = field(default_factory=dict)


@dataclass(frozen=True)
class SlackConfig:
    """The Slack adapter (``adapters/slack.py``). Tokens come from the environment only."""

    enabled: bool = False
    mode: str = "socket"  # "socket" (SLACK_APP_TOKEN, no public URL) or "http" (SLACK_SIGNING_SECRET + a public URL)
    api_url: str = "https://slack.com/api/"  # GovSlack: https://slack-gov.com/api/
    http_host: str = "0.0.0.0"  # HTTP mode: where the events server listens
    http_port: int = 3000
    http_path: str = "/slack/events"  # the Request URL's path, for events and interactivity alike
    allowed_channels: tuple[str, ...] = ()  # channel ids (C…/G…); empty: every channel the bot is in
    allowed_users: tuple[str, ...] = ()  # user ids (U…/W…); empty: everyone in the workspace
    direct_messages: bool = True  # DMs to the bot; allowed_channels does not apply to them, allowed_users does
    update_interval_s: float = 1.0  # least time between two edits of one message (Slack allows about one a second)
    max_message_chars: int = 3500  # longer text is split into several messages (Slack advises 4,000 at most)
    upload_files_over_chars: int = 2500  # a longer file goes to the thread as a file snippet, not as text
    max_rate_limit_retries: int = 5  # a 429 is retried after its Retry-After this many times per call
    request_timeout_s: float = 30.0  # one Web API call

    def __post_init__(self) -> None:
        if self.mode not in ("socket", "http"):
            raise SettingsError("slack.mode", f"must be \"socket\" or \"http\", got {self.mode!r}")
        if not self.api_url.startswith(("https://", "http://")):
            raise SettingsError("slack.api_url", "must start with https://", "e.g. https://slack.com/api/")
        if not self.http_path.startswith("/"):
            raise SettingsError("slack.http_path", "must start with /", "e.g. /slack/events")
        if not 0 < self.http_port < 65536:
            raise SettingsError("slack.http_port", f"must be between 1 and 65535, got {self.http_port}")
        if not 100 <= self.max_message_chars <= 40_000:  # Slack truncates a message's text past 40,000
            raise SettingsError("slack.max_message_chars", "must be between 100 and 40,000")
        for name in ("update_interval_s", "upload_files_over_chars", "request_timeout_s"):
            if getattr(self, name) <= 0:
                raise SettingsError(f"slack.{name}", f"must be greater than 0, got {getattr(self, name)}")
        if self.max_rate_limit_retries < 0:
            raise SettingsError("slack.max_rate_limit_retries", "must be 0 or more")


DISCORD_MESSAGE_LIMIT = 2000  # characters Discord accepts in one message


@dataclass(frozen=True)
class DiscordConfig:
    """The Discord bot (``DISCORD_TOKEN``). Empty allowlists allow everyone; ids are Discord's numeric ids."""

    enabled: bool = False
    api_url: str = ""  # empty: Discord itself; else a Discord-compatible REST base such as http://HOST/api/v10
    gateway_url: str = ""  # empty: Discord's gateway; else e.g. wss://HOST/ (set together with api_url)
    message_content_intent: bool = False  # privileged: follow-ups in a thread without mentioning the bot
    sync_guilds: tuple[int, ...] = ()  # sync /code to these guilds at once; empty: globally (can take a while)
    allowed_guilds: tuple[int, ...] = ()
    allowed_channels: tuple[int, ...] = ()  # a thread counts as its parent channel
    allowed_roles: tuple[int, ...] = ()  # a user needs one of these roles
    update_interval_s: float = 1.0  # at most one edit per message this often while a turn streams
    max_message_chars: int = DISCORD_MESSAGE_LIMIT
    inline_code_max_chars: int = 1500  # a longer code block becomes a file attachment when its turn ends
    max_attachment_bytes: int = 256_000
    thread_archive_minutes: int = 1440  # Discord accepts 60, 1440, 4320 or 10080

    def __post_init__(self) -> None:
        for name in ("api_url", "gateway_url"):
            value = getattr(self, name)
            if value and not value.startswith(("https://", "http://", "wss://", "ws://")):
                raise SettingsError(f"discord.{name}", "must be a URL", "or empty for Discord itself")
        if bool(self.api_url) != bool(self.gateway_url):
            raise SettingsError("discord.api_url", "api_url and gateway_url go together", "set both or neither")
        if not 100 <= self.max_message_chars <= DISCORD_MESSAGE_LIMIT:
            raise SettingsError("discord.max_message_chars", f"must be between 100 and {DISCORD_MESSAGE_LIMIT}")
        if self.thread_archive_minutes not in (60, 1440, 4320, 10080):
            raise SettingsError("discord.thread_archive_minutes", "must be 60, 1440, 4320 or 10080")
        for name in ("update_interval_s", "inline_code_max_chars", "max_attachment_bytes"):
            if getattr(self, name) < 0:
                raise SettingsError(f"discord.{name}", f"must be 0 or more, got {getattr(self, name)}")


@dataclass(frozen=True)
class Config:
    llm: LLMConfig = field(default_factory=LLMConfig)
    agents: dict[str, AgentSettings] = field(default_factory=dict)
    prices: dict[str, Price] = field(default_factory=dict)
    budget: Budget = field(default_factory=Budget)  # the team's own budget type, read straight from [budget]
    input: InputConfig = field(default_factory=InputConfig)
    storage: StorageConfig = field(default_factory=StorageConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    checkin: CheckinConfig = field(default_factory=CheckinConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    slack: SlackConfig = field(default_factory=SlackConfig)
    discord: DiscordConfig = field(default_factory=DiscordConfig)
    source: str = field(default="(built-in defaults)", metadata={"internal": True})

    def agent(self, role: str) -> ResolvedAgentSettings:
        """The settings a role runs with: its own table over ``[agents.default]`` over built-ins."""
        default = self.agents.get("default", AgentSettings())
        own = self.agents.get(role, AgentSettings())

        def pick(name: str) -> object:
            for layer in (own, default):
                value = getattr(layer, name)
                if value is not None:
                    return value
            return getattr(DEFAULT_AGENT, name)

        return ResolvedAgentSettings(
            model=str(pick("model")), temperature=float(pick("temperature")),  # type: ignore[arg-type]
            max_tokens=int(pick("max_tokens")),  # type: ignore[call-overload]
        )

    def db_path(self) -> Path:
        return Path(os.path.expanduser(self.storage.path))


@dataclass(frozen=True)
class Secrets:
    """Secrets come from the environment only, never from a file or a prompt."""

    openai_api_key: str = ""
    openai_base_url: str = ""
    github_token: str = ""
    slack_bot_token: str = ""
    slack_app_token: str = ""
    slack_signing_secret: str = ""
    discord_token: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Secrets:
        env = os.environ if env is None else env
        return cls(**{name: env.get(name.upper(), "").strip() for name in cls.__dataclass_fields__})

    def values(self) -> list[str]:
        """Every secret that is set, for scrubbing text before it leaves the process."""
        return [v for k, v in vars(self).items() if v and k != "openai_base_url"]

    def require(self, *names: str) -> None:
        for name in names:
            if not getattr(self, name):
                raise ConfigError(f"{name.upper()} is not set: export it in the environment before starting")


def find_config_path(explicit: str | None, env: Mapping[str, str] | None = None) -> Path | None:
    """``--config``, else ``$CODEGEN_CONFIG``, else ``./config.toml`` when present, else built-ins."""
    env = os.environ if env is None else env
    chosen = explicit or env.get(CONFIG_ENV)
    if chosen:
        return Path(chosen)
    local = Path(DEFAULT_CONFIG_FILE)
    return local if local.exists() else None


def load_config(path: Path | None) -> Config:
    """Read and check the whole config once; any problem is a ``ConfigError`` naming the key."""
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file (pass --config PATH or set {CONFIG_ENV})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the config file: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    try:
        config = dataclasses.replace(build(Config, data, ""), source=str(path))
        _check_values(config)
    except SettingsError as error:
        raise ConfigError(f"{path}: {error}") from None
    return config


def _check_values(config: Config) -> None:
    for name in config.agents:
        if name != "default" and name not in {r.value for r in Role}:
            roles = ", ".join(["default", *(r.value for r in Role)])
            raise SettingsError(f"agents.{name}", "not a role", f"use one of: {roles}")
    positive = {
        "budget.max_rounds": config.budget.max_rounds, "budget.max_tokens": config.budget.max_tokens,
        "budget.max_wall_s": config.budget.max_wall_s, "llm.request_timeout_s": config.llm.request_timeout_s,
        "limits.max_concurrent_runs": config.limits.max_concurrent_runs,
        "limits.max_runs_per_user": config.limits.max_runs_per_user,
        "limits.max_queued_runs": config.limits.max_queued_runs,
        "limits.max_queued_runs_per_user": config.limits.max_queued_runs_per_user,
        "sandbox.timeout_s": config.sandbox.timeout_s, "sandbox.concurrency": config.sandbox.concurrency,
        "sandbox.memory_mb": config.sandbox.memory_mb,
    }
    for key, value in positive.items():
        if value <= 0:
            raise SettingsError(key, f"must be greater than 0, got {value}")
    if config.llm.max_retries < 0:
        raise SettingsError("llm.max_retries", "must be 0 or more")
    if config.budget.max_replans < 0:
        raise SettingsError("budget.max_replans", "must be 0 or more")
    for role in Role:
        settings = config.agent(role)
        if not 0.0 <= settings.temperature <= 2.0:
            raise SettingsError(f"agents.{role}.temperature", "must be between 0 and 2")
        if settings.max_tokens <= 0:
            raise SettingsError(f"agents.{role}.max_tokens", "must be greater than 0")
