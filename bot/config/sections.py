"""Configuration: ``config.toml`` read once into typed, frozen objects; secrets only from the environment.

Every default below is the value a fresh install runs with; ``config.toml`` in the repo spells them out.
Each field says what it accepts where it is declared (``Annotated[float, Range(...)]``, ``OneOf``...;
see ``bot/config/settings.py``), so adding a key is one line here plus its line in config.toml and the README.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

from agents.errors import CodegenError, UserInputError
from agents.language.reports import REPORT_FORMATS
from agents.manager import Budget, FixReplies, Order, TeamSettings
from agents.types import Role
from bot.config.settings import (
    Checked,
    HostNames,
    HttpUrl,
    IpAddresses,
    Matches,
    NoCredentials,
    OneOf,
    Range,
    SettingsError,
    SetWith,
    StartsWith,
    build,
    http_url_problem,
    parse_toml,
)
from bot.safety.local_files import Use, read_regular_file
from bot.safety.redact import database_url_secrets, url_secrets
from bot.safety.text import not_text

CONFIG_ENV = "CODEGEN_CONFIG"
DEFAULT_CONFIG_FILE = "config.toml"
DEFAULT_DB_PATH = "~/.local/share/codegen-chat/codegen.sqlite3"
BUILT_IN_SOURCE = "(built-in defaults)"


class ConfigError(CodegenError):
    """The configuration cannot be used. The message names the key, the problem and the fix."""


# The ranges most settings share. Upper bounds are far past any sensible value: they only stop a
# typo (an extra zero or three) from becoming a limit that never applies.
HOUR_S, DAY_S, WEEK_S = 3_600.0, 86_400.0, 604_800.0
Seconds = Annotated[float, Range(0, DAY_S, low_open=True)]  # a timeout or interval that must pass
Wait = Annotated[float, Range(0, HOUR_S)]  # a pause that may be 0
Retries = Annotated[int, Range(0, 100)]
Count = Annotated[int, Range(1, 100_000)]  # at least one
Bytes = Annotated[int, Range(1, 10_000_000_000)]
Megabytes = Annotated[int, Range(1, 1_048_576)]
Url = Annotated[str, StartsWith(("https://", "http://"), "https://HOST/api/v3"), NoCredentials("GITHUB_TOKEN")]


@dataclass(frozen=True)
class LLMConfig(Checked, section="llm"):
    # empty: OPENAI_BASE_URL from the environment, else OpenAI itself
    base_url: Annotated[str, HttpUrl("http://127.0.0.1:8080/v1")] = ""
    request_timeout_s: Seconds = 120.0
    max_retries: Retries = 4
    backoff_s: Wait = 1.0
    max_backoff_s: Wait = 30.0
    # How many requests the endpoint gets at once (across every run): 0, "auto", as many as the team makes
    # until the server drops a reply for another request, then one at a time (bot.model.endpoint_gate).
    parallel_requests: Annotated[int, Range(0, 1000)] = 0
    # "auto": the endpoint configured (OPENAI_API_KEY, OPENAI_BASE_URL or base_url), else the embedded model;
    # "openai": the endpoint only; "embedded": the embedded model, a llama.cpp server the bot runs itself.
    provider: Annotated[str, OneOf("auto", "openai", "embedded")] = "auto"
    embedded_model: str = ""  # a GGUF file for the embedded server; empty: the default, fetched once


Temperature = Annotated[float, Range(0.0, 2.0)]
MaxTokens = Annotated[int, Range(1, 10_000_000)]


@dataclass(frozen=True)
class AgentSettings(Checked):
    """Model settings of one role; unset values come from ``[agents.default]``."""

    model: str | None = None
    temperature: Temperature | None = None
    max_tokens: MaxTokens | None = None


@dataclass(frozen=True)
class ResolvedAgentSettings:
    model: str
    temperature: float
    max_tokens: int


DEFAULT_AGENT = ResolvedAgentSettings(model="gpt-4o-mini", temperature=0.2, max_tokens=4096)


PerMillion = Annotated[float, Range(0.0, 10_000.0)]


@dataclass(frozen=True)
class Price(Checked):
    """US dollars per million tokens."""

    input_per_million: PerMillion = 0.0
    output_per_million: PerMillion = 0.0


@dataclass(frozen=True)
class BudgetConfig(Budget, Checked, section="budget"):
    """``[budget]``: the team's own ``Budget`` (its defaults), with the values the config accepts."""

    max_rounds: Annotated[int, Range(1, 1_000)] = Budget.max_rounds
    max_tokens: Annotated[int, Range(1, 1_000_000_000)] = Budget.max_tokens
    max_wall_s: Annotated[float, Range(0, WEEK_S, low_open=True)] = Budget.max_wall_s
    max_replans: Annotated[int, Range(0, 100)] = Budget.max_replans


@dataclass(frozen=True)
class TeamConfig(Checked, section="team"):
    """``[team]``: how the agents' steps follow each other (agents/manager.py draws both orders)."""

    order: Annotated[str, OneOf(*(order.value for order in Order))] = Order.OVERLAPPED.value
    fix_replies: Annotated[str, OneOf(*(how.value for how in FixReplies))] = FixReplies.AUTO.value
    # seconds of silence from the model before a thread shows "waiting for the model (N s)"
    wait_notice_s: Seconds = TeamSettings.wait_notice_s
    # code that fails the task's own tests (its examples, the user's tests) is written afresh from the given files,
    # sampled at resample_temperature so it can differ; false: the failing version is fixed instead
    fresh_candidates: bool = True
    resample_temperature: Temperature = 0.8


DEFAULT_THREAD_MESSAGES = 50
DEFAULT_THREAD_CHARS = 40_000


@dataclass(frozen=True)
class InputConfig(Checked, section="input"):
    max_task_chars: Annotated[int, Range(1, 10_000_000)] = 20_000
    max_attachment_bytes: Annotated[int, Range(1, 1_000_000_000)] = 256_000
    max_attachments: Annotated[int, Range(0, 1_000)] = 10
    # A mention in a Slack or Discord thread reads the messages before it: at most this many, newest kept,
    thread_messages: Annotated[int, Range(0, 10_000)] = DEFAULT_THREAD_MESSAGES
    # and at most this many characters of them (their text and the files read from them).
    thread_chars: Annotated[int, Range(0, 10_000_000)] = DEFAULT_THREAD_CHARS
    # Repositories whose GitHub links in a thread are read (a pull request, a commit, a file): "owner/name",
    # or "owner/*" for all of an owner's. Empty: no link is fetched.
    link_repositories: tuple[Annotated[str, Matches(r"[\w.-]+/(?:[\w.-]+|\*)", "owner/name or owner/*")], ...] = ()
    max_link_diff_chars: Annotated[int, Range(0, 10_000_000)] = 20_000  # of a linked pull request's or commit's diff


@dataclass(frozen=True)
class StorageConfig(Checked, section="storage"):
    path: str = DEFAULT_DB_PATH  # the SQLite file, when ``url`` is empty
    # A PostgreSQL database the replicas share, e.g. "postgresql://codegen:PASSWORD@db.internal:5432/codegen".
    # Empty: SQLite at ``path``. Its password is masked like every secret (or give it as PGPASSWORD instead).
    url: Annotated[str, StartsWith(("postgresql://", "postgres://"), "postgresql://USER@HOST:5432/DB", optional=True)] = ""
    # With a url, ``serve`` runs chat runs as durable jobs any replica may claim: each owner heartbeats its runs
    # this often, and a replica silent for ``owner_lost_after_s`` has its runs taken over by another.
    heartbeat_s: Seconds = 5.0
    owner_lost_after_s: Seconds = 30.0


@dataclass(frozen=True)
class LimitsConfig(Checked, section="limits"):
    max_concurrent_runs: Count = 8
    max_runs_per_user: Count = 2
    max_queued_runs: Count = 100
    max_queued_runs_per_user: Count = 10
    # Replicas on PostgreSQL: the two limits above count every replica's runs together (what the model endpoint
    # takes); this is how many of them one replica runs at once (its own CPU and memory). 0: max_concurrent_runs.
    max_runs_per_replica: Annotated[int, Range(0, 10_000)] = 0


@dataclass(frozen=True)
class RuntimeConfig(Checked, section="runtime"):
    """How the bot process lives: its health endpoints, its shutdown, what it does after a restart."""

    health_host: str = "127.0.0.1"  # the health endpoints' own server, when no Slack HTTP server carries them
    health_port: Annotated[int, Range(0, 65_535)] = 8080  # 0: no server of its own
    shutdown_grace_s: Annotated[float, Range(0, HOUR_S, low_open=True)] = 20.0  # runs get this long to stop
    resume_interrupted: bool = False  # at start, continue the runs a stopped or crashed bot left unfinished


@dataclass(frozen=True)
class CheckinConfig(Checked, section="checkin"):
    """Publishing the result as a GitHub Gist (``GITHUB_TOKEN``), or the fallback when GitHub is not set up."""

    publish_failed: bool = True  # publish a run whose tests failed, clearly marked (the Manager decides)
    public: bool = False  # secret Gists unless a team opts in
    github_api_url: Url = "https://api.github.com"  # GitHub Enterprise Server: https://HOST/api/v3
    timeout_s: Seconds = 30.0  # one HTTP request
    max_retries: Retries = 3  # after a 5xx, a network error or a rate limit
    max_file_bytes: Bytes = 1_000_000  # larger files are left out of the Gist with a note (the API truncates them)
    backoff_s: Wait = 1.0  # first wait before a retry; doubles each time unless GitHub says how long
    max_wait_s: Wait = 60.0  # longest wait honoured; a rate limit resetting later falls back at once
    write_interval_s: Wait = 1.0  # GitHub asks for a pause between writes to avoid its secondary rate limit


@dataclass(frozen=True)
class LanguageConfig(Checked):
    """One language: how the team names its files, and how its tests run (an image, the commands, how to
    read results). It becomes an ``agents.language.Language``, laid over a built-in one of the same name.

    ``extensions`` (".lua", the first for new files), ``test_files`` (glob patterns such as "*_test.lua";
    the first names the test files the team writes), ``usual_file`` (a lone source file's name, "main.lua"
    when empty), ``title`` ("Lua") and ``aliases`` (other words for it in a code fence) are how its files are
    recognised and named; a built-in language keeps its own for any left empty.
    Commands run with ``sh -c`` inside the container, in ``workdir``. ``setup_command`` runs first,
    only when one of ``setup_when`` exists among the files (network per ``[sandbox] setup_network``).
    ``report_format`` is one of pytest, go, cargo, tap, junit, exit-code (see bot/sandbox/results.py).
    With any format but exit-code, a run passes only when the runner shows at least one test that passed.
    """

    image: str = ""  # pulled by `sandbox build`; the official language image by default
    image_prepare: str = ""  # run once by `sandbox build` on top of `image` (e.g. install the runner)
    offline_image: str = ""  # built by `sandbox build --offline`; used when use_offline_images
    offline_packages: tuple[str, ...] = ()  # Debian packages layered on the offline base image
    extensions: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()
    usual_file: str = ""
    title: str = ""
    aliases: tuple[str, ...] = ()
    workdir: str = "/work"
    env: dict[str, str] = field(default_factory=dict)  # the only environment the container sees
    setup_when: tuple[str, ...] = ()  # file names that call for the setup step
    setup_command: str = ""
    test_command: str = ""
    report_format: str = "exit-code"
    # A structured report the test command writes outside the work dir (pytest's JUnit XML): when set, the
    # counts come from it, and a run that did not write it has not passed, whatever it printed or exited with.
    report_file: str = ""


DEFAULT_SANDBOX_BASE_IMAGE = "codegen-chat-sandbox/base:bookworm"
DEFAULT_SETUP_HOSTS = ("pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "proxy.golang.org",
                       "sum.golang.org", "crates.io", "static.crates.io", "index.crates.io")
DEFAULT_DEBIAN_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class KubernetesConfig(Checked, section="sandbox.kubernetes"):
    """Where ``[sandbox] backend = "kubernetes"`` runs each test job: a Pod in ``namespace`` (docs/kubernetes.md).

    The cluster comes from ``kubeconfig`` (and ``context``), else from the service account when the bot runs in
    a Pod itself (``KUBERNETES_SERVICE_HOST``), else from ``~/.kube/config``. ``images`` maps a language to the
    image the cluster pulls for it (a registry the nodes reach); a language missing there uses its ``image``."""

    namespace: Annotated[str, Matches(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?",
                                      "a namespace name, e.g. codegen-sandbox")] = "codegen-sandbox"
    # a RuntimeClass for the test Pods: "gvisor" (deploy/k8s/runtimeclass-gvisor.yaml); empty for the node's default
    runtime_class: Annotated[str, Matches(r"([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?", "a RuntimeClass name, e.g. gvisor")] = ""
    images: dict[str, str] = field(default_factory=dict)
    kubeconfig: str = ""  # a kubeconfig file; empty: in-cluster when in a Pod, else ~/.kube/config
    context: str = ""  # a context of that kubeconfig; empty: its current one
    image_pull_policy: Annotated[str, OneOf("IfNotPresent", "Always", "Never")] = "IfNotPresent"
    pod_start_timeout_s: Seconds = 120.0  # scheduling and the image pull, before a Pod runs or is given up


@dataclass(frozen=True)
class SandboxConfig(Checked, section="sandbox"):
    """Limits and images of the test sandbox. ``languages`` lays over the built-in table by name."""

    enabled: bool = True
    # where tests run: "docker" (one engine: this host's, or docker_host) or "kubernetes" (a Pod per job,
    # [sandbox.kubernetes]; docs/kubernetes.md)
    backend: Annotated[str, OneOf("docker", "kubernetes")] = "docker"
    kubernetes: KubernetesConfig = field(default_factory=KubernetesConfig)
    docker_host: str = ""  # empty: DOCKER_HOST from the environment, else the local socket
    # the engine's container runtime for test containers: empty for its default (runc); "runsc" for gVisor,
    # registered with the engine under that name (docs/sandbox.md)
    runtime: Annotated[str, Matches(r"[A-Za-z0-9][A-Za-z0-9_.-]*|", "a runtime name the Docker engine knows, e.g. runsc")] = ""
    use_offline_images: bool = False
    timeout_s: Seconds = 120.0
    setup_timeout_s: Seconds = 300.0
    setup_network: bool = True  # network during the dependency setup step; never during tests
    setup_allowed_hosts: tuple[str, ...] = DEFAULT_SETUP_HOSTS  # the only names setup's proxy lets through
    memory_mb: Annotated[int, Range(16, 1_048_576)] = 512  # swap is off: memory and memory+swap are the same
    cpus: Annotated[float, Range(0.01, 1_024)] = 1.0
    pids_limit: Annotated[int, Range(16, 4_194_304)] = 256  # Docker reads 0 or less as "no limit"
    nofile_limit: Annotated[int, Range(16, 1_048_576)] = 1024
    file_size_mb: Megabytes = 64  # largest file a test may write
    workdir_size_mb: Megabytes = 256  # tmpfs holding the run's files
    tmp_size_mb: Megabytes = 256  # tmpfs at /tmp (HOME, caches, build output)
    max_output_bytes: Annotated[int, Range(1_000, 10_000_000_000)] = 1_000_000  # per run, stdout and stderr; head and tail kept
    max_upload_bytes: Bytes = 20_000_000  # the files of one job
    user: str = "65534:65534"
    concurrency: Annotated[int, Range(1, 1_000)] = 4  # containers running tests at once; more runs wait their turn
    warm_pool: bool = False
    warm_pool_size: Annotated[int, Range(1, 100)] = 1  # idle pre-started containers per language, each used once
    base_image: str = DEFAULT_SANDBOX_BASE_IMAGE  # the debootstrap image offline images build on
    debian_mirror: str = DEFAULT_DEBIAN_MIRROR
    debian_suite: str = "bookworm"
    languages: dict[str, LanguageConfig] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, language in self.languages.items():
            key, problem = language_problem(language)
            if problem:
                raise ConfigError(f"sandbox.languages.{name}{key}: {problem}")


def language_problem(language: LanguageConfig) -> tuple[str, str]:
    """What makes a configured language unusable (the key under it, the problem), checked when the config is
    read: a run must never be the first to find that its language cannot run tests."""
    if not language.image and not language.offline_image:
        return "", 'no image: set image = "..." (and offline_image for offline use)'
    if not language.test_command.strip():
        return ".test_command", "empty: set the shell command that runs the tests"
    if language.report_format not in REPORT_FORMATS:
        return ".report_format", f"{language.report_format!r} is not known (use one of: {', '.join(REPORT_FORMATS)})"
    for extension in language.extensions:
        if not re.fullmatch(r"\.[\w.+-]+", extension):
            return ".extensions", (f"{extension!r} is not a file extension: write it with its dot, "
                                   f"like \".{extension.strip('.*') or 'ext'}\"")
    for pattern in language.test_files:
        if "*" not in pattern:
            return ".test_files", (f"{pattern!r} names one file, not a kind of file: write a pattern with a *, "
                                   "like \"*_test.lua\" or \"test_*.lua\"")
    return "", ""


@dataclass(frozen=True)
class SlackConfig(Checked, section="slack"):
    """The Slack adapter (``adapters/slack.py``). Tokens come from the environment only."""

    enabled: bool = False
    # "socket" (SLACK_APP_TOKEN, no public URL) or "http" (SLACK_SIGNING_SECRET + a public URL)
    mode: Annotated[str, OneOf("socket", "http")] = "socket"
    api_url: Annotated[str, StartsWith(("https://", "http://"), "https://slack.com/api/")] = "https://slack.com/api/"
    http_host: str = "0.0.0.0"  # HTTP mode: where the events server listens
    http_port: Annotated[int, Range(1, 65_535)] = 3000
    http_path: Annotated[str, StartsWith(("/",), "/slack/events")] = "/slack/events"  # the Request URL's path
    allowed_channels: tuple[str, ...] = ()  # channel ids (C…/G…); empty: every channel the bot is in
    allowed_users: tuple[str, ...] = ()  # user ids (U…/W…); empty: everyone in the workspace (another's: if listed)
    direct_messages: bool = True  # DMs to the bot; allowed_channels does not apply to them, allowed_users does
    update_interval_s: Seconds = 1.0  # least time between two edits of one message (Slack allows about one a second)
    # longer text is split into several messages (Slack advises 4,000 at most, truncates past 40,000)
    max_message_chars: Annotated[int, Range(100, 40_000)] = 3500
    upload_files_over_chars: Annotated[int, Range(1, 10_000_000)] = 2500  # a longer file goes as a file snippet
    max_rate_limit_retries: Retries = 5  # a 429 is retried after its Retry-After this many times per call
    request_timeout_s: Seconds = 30.0  # one Web API call
    # "full": a message per agent turn; "compact": the status message, the files and the result only
    thread_detail: Annotated[str, OneOf("full", "compact")] = "full"


DISCORD_MESSAGE_LIMIT = 2000  # characters Discord accepts in one message
DiscordId = Annotated[int, Range(1, 2**64 - 1)]  # a snowflake
DiscordUrl = Annotated[str, StartsWith(("https://", "http://", "wss://", "ws://"), "http://HOST/api/v10", optional=True)]


@dataclass(frozen=True)
class DiscordConfig(Checked, section="discord"):
    """The Discord bot (``DISCORD_TOKEN``); ids are Discord's numeric ids. It serves the servers ``allowed_guilds``
    lists, else those ``sync_guilds`` lists, else none unless ``any_server``: anyone may add a public bot to their
    own server. Empty channel and role lists allow every channel and member of a served server."""

    enabled: bool = False
    # empty: Discord itself; else a Discord-compatible REST base such as http://HOST/api/v10
    api_url: Annotated[DiscordUrl, SetWith("gateway_url")] = ""
    gateway_url: Annotated[DiscordUrl, SetWith("api_url")] = ""  # empty: Discord's gateway; else e.g. wss://HOST/
    message_content_intent: bool = False  # privileged: follow-ups in a thread without mentioning the bot
    sync_guilds: tuple[DiscordId, ...] = ()  # sync /code to these guilds at once; empty: globally (can take a while)
    allowed_guilds: tuple[DiscordId, ...] = ()  # the servers served; empty: sync_guilds'
    any_server: bool = False  # serve every server the bot is in, with both lists empty
    allowed_channels: tuple[DiscordId, ...] = ()  # a thread counts as its parent channel
    allowed_roles: tuple[DiscordId, ...] = ()  # a user needs one of these roles
    update_interval_s: Wait = 1.0  # at most one edit per message this often, a turn's last edit included
    # posts and edits in one thread per 5 s, all runs in it together (Discord's per-channel rate)
    channel_writes_per_5s: Annotated[int, Range(1, 1000)] = 5
    max_message_chars: Annotated[int, Range(100, DISCORD_MESSAGE_LIMIT)] = DISCORD_MESSAGE_LIMIT
    inline_code_max_chars: Annotated[int, Range(0, 1_000_000)] = 1500  # longer code becomes a file when its turn ends
    max_attachment_bytes: Annotated[int, Range(0, 1_000_000_000)] = 256_000
    thread_archive_minutes: Annotated[int, OneOf(60, 1440, 4320, 10080)] = 1440
    # "full": a message per agent turn; "compact": the status message, the files and the result only
    thread_detail: Annotated[str, OneOf("full", "compact")] = "full"


GITHUB_COMMENT_LIMIT = 65_536  # characters GitHub accepts in one comment


@dataclass(frozen=True)
class GitHubConfig(Checked, section="github"):
    """Pull requests (``adapters/github``): ``@BOT_LOGIN`` in a PR's comments or reviews, and CI events, delivered
    as webhooks to ``POST path`` on the platform's own port. ``GITHUB_WEBHOOK_SECRET`` verifies each delivery;
    the bot answers with ``GITHUB_TOKEN`` or the GitHub App (``GITHUB_APP_*``), at ``[checkin] github_api_url``."""

    enabled: bool = False
    host: str = "0.0.0.0"  # where the webhook server listens (it answers /healthz and /readyz too)
    port: Annotated[int, Range(1, 65_535)] = 8090
    path: Annotated[str, StartsWith(("/",), "/github/webhook")] = "/github/webhook"  # the webhook URL's path
    # the login people mention (@codegen-chat); the bot's own comments are never taken as requests
    bot_login: Annotated[str, Matches(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}", "a GitHub login, e.g. codegen-chat")] = "codegen-chat"
    opt_out_label: str = "codegen-chat: off"  # a pull request carrying this label is left alone
    runs_per_pr_per_day: Annotated[int, Range(1, 10_000)] = 20  # runs one pull request may start in a UTC day
    update_interval_s: Seconds = 5.0  # least time between two edits of one comment
    max_message_chars: Annotated[int, Range(1_000, GITHUB_COMMENT_LIMIT)] = 60_000  # longer text continues in another comment
    inline_code_max_chars: Annotated[int, Range(1, 10_000_000)] = 6000  # a longer code block goes in a folded file section
    # "compact": one status comment, the files and the result; "full": a comment per agent turn
    thread_detail: Annotated[str, OneOf("full", "compact")] = "compact"
    # the Optimizer's requests on the pull requests the bot opens, as one review with comments on their lines
    inline_review: bool = False


@dataclass(frozen=True)
class RepoSettings(Checked):
    """``[repos."owner/name"]``: one repository the team may work on, and how."""

    base: str = ""  # the branch work starts from; empty: the repository's default branch
    test_command: str = ""  # empty: detected from the tree (pytest, npm test, go test ./..., cargo test, Maven/Gradle)
    defaults_for: tuple[str, ...] = ()  # places where a request naming no repository means this one: "slack:C0123",
    #                                     "discord:GUILD_OR_CHANNEL_ID", "web", "terminal"
    users: tuple[str, ...] = ()  # who may ask for work on it (platform user ids); empty: whoever may use the bot
    labels: tuple[str, ...] = ()  # added to [repos] labels on its pull requests
    co_authors: dict[str, str] = field(default_factory=dict)  # user id -> "Name <email>" for Co-authored-by


@dataclass(frozen=True)
class ReposConfig(Checked, section="repos"):
    """``[repos]``: working on a team's repository and checking the work in as a pull request (docs/repositories.md).
    Only the repositories given as ``[repos."owner/name"]`` tables may be named; the rest is refused."""

    git_url: Url = "https://github.com"  # where owner/name is cloned from and pushed to; Enterprise: https://HOST
    max_files: Annotated[int, Range(1, 10_000_000)] = 20_000  # a larger tree is refused with a sentence
    max_bytes: Bytes = 500_000_000  # fetched objects and checked-out files, each
    max_file_bytes: Bytes = 1_000_000  # larger files are neither shown to the team nor sent to the sandbox
    clone_timeout_s: Seconds = 300.0
    map_chars: Annotated[int, Range(200, 1_000_000)] = 6_000  # the repository map's fixed size in every prompt
    draft: bool = True  # pull requests open as drafts
    open_failing_prs: bool = False  # a failing run pushes its branch; a pull request only with this set
    labels: tuple[str, ...] = ("codegen-chat",)
    local_paths: bool = True  # `codegen-chat run --repo PATH` works on a folder of this machine
    allowed: dict[str, RepoSettings] = field(default_factory=dict)  # the [repos."owner/name"] tables, by name


RoleName = Annotated[str, OneOf("default", *(r.value for r in Role), noun="a role")]


@dataclass(frozen=True)
class WebConfig(Checked, section="web"):
    """The web chat (``adapters/web``): ``codegen-chat web``, or under ``serve`` when enabled. Binding anywhere
    but loopback needs ``CODEGEN_WEB_TOKEN`` (environment only) or a sign-in proxy's ``user_header``."""

    enabled: bool = False  # serve it with `codegen-chat serve` too
    host: Annotated[str, Matches(r"\S+", "an address, e.g. 127.0.0.1 (this machine only)")] = "127.0.0.1"
    port: Annotated[int, Range(1, 65_535)] = 8000
    # the trusted proxy's user header (oauth2-proxy: X-Forwarded-User); empty: no proxy
    user_header: Annotated[str, Matches(r"[A-Za-z0-9-]*", "an HTTP header name, e.g. X-Forwarded-User")] = ""
    # user_header is believed only from a connection whose own peer address is one of these (addresses or networks)
    proxy_addresses: Annotated[tuple[str, ...], IpAddresses()] = ("127.0.0.1", "::1")
    # behind the proxy: the names people open the chat at (the Host header the proxy passes on); the bot's own
    # address is always allowed. A request naming any other host is refused (a DNS-rebinding page).
    allowed_hosts: Annotated[tuple[str, ...], HostNames()] = ()
    update_interval_s: Seconds = 0.1  # least time between two updates of a turn being written
    max_message_chars: Annotated[int, Range(500, 1_000_000)] = 20_000  # longer text continues in a further message
    inline_code_max_chars: Annotated[int, Range(1, 10_000_000)] = 6000  # a longer code block is shown as a file
    thread_detail: Annotated[str, OneOf("full", "compact")] = "full"


@dataclass(frozen=True)
class CiConfig(Checked, section="ci"):
    """``[ci]``: following the CI of the bot's own pull requests and fixing it when it fails (docs/ci.md)."""

    follow: bool = True  # after a push to a pull request, follow its head commit's checks (needs GITHUB_TOKEN)
    max_fix_attempts: Annotated[int, Range(0, 20)] = 3  # fix rounds per pull request before the bot stops and says so
    poll_first_s: Seconds = 10.0  # without a webhook, the first look again; doubles each time
    poll_max_s: Seconds = 120.0  # the longest pause between two looks
    max_wait_s: Seconds = 3_600.0  # one commit's CI is followed at most this long
    no_checks_s: Seconds = 300.0  # a commit with no check or status by then has no CI to follow
    log_chars: Annotated[int, Range(200, 1_000_000)] = 6_000  # the failing jobs' output, as the fix round is shown it
    log_max_bytes: Bytes = 5_000_000  # of a job's log, the end is read, at most this much


@dataclass(frozen=True)
class Config(Checked):
    llm: LLMConfig = field(default_factory=LLMConfig)
    agents: dict[RoleName, AgentSettings] = field(default_factory=dict)
    prices: dict[str, Price] = field(default_factory=dict)
    budget: BudgetConfig = field(default_factory=BudgetConfig)  # the team's own Budget, with the config's ranges
    team: TeamConfig = field(default_factory=TeamConfig)
    input: InputConfig = field(default_factory=InputConfig)
    storage: StorageConfig = field(default_factory=StorageConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    checkin: CheckinConfig = field(default_factory=CheckinConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    slack: SlackConfig = field(default_factory=SlackConfig)
    discord: DiscordConfig = field(default_factory=DiscordConfig)
    github: GitHubConfig = field(default_factory=GitHubConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    web: WebConfig = field(default_factory=WebConfig)
    repos: ReposConfig = field(default_factory=ReposConfig)
    ci: CiConfig = field(default_factory=CiConfig)
    source: str = field(default=BUILT_IN_SOURCE, metadata={"internal": True})

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
        """The SQLite file. A relative ``storage.path`` is taken from the config file's folder, not from wherever the
        command was started: ``history`` or ``--continue`` in another folder must find the same runs."""
        path = Path(os.path.expanduser(self.storage.path))
        if path.is_absolute() or self.source == BUILT_IN_SOURCE:
            return path
        return Path(self.source).absolute().parent / path


@dataclass(frozen=True)
class Secrets:
    """Secrets come from the environment only, never from a file or a prompt."""

    openai_api_key: str = ""
    openai_base_url: str = ""
    # The organization and project an OpenAI key bills to, as the OpenAI SDK reads them (sent as headers).
    openai_org_id: str = field(default="", metadata={"public": True})
    openai_project_id: str = field(default="", metadata={"public": True})
    github_token: str = ""
    # A GitHub App instead of (or beside) a token, for repository work: its id, its private key (PEM) and the
    # installation on the team's organization; each run mints an installation token from them.
    github_app_id: str = field(default="", metadata={"public": True})
    github_app_private_key: str = field(default="", metadata={"lines": True})  # a PEM: its line breaks are its own
    github_app_installation_id: str = field(default="", metadata={"public": True})
    github_webhook_secret: str = ""  # verifies each webhook delivery ([github]): the secret set on the webhook
    slack_bot_token: str = ""
    slack_app_token: str = ""
    slack_signing_secret: str = ""
    discord_token: str = ""
    codegen_web_token: str = ""  # the web chat's access token
    pgpassword: str = ""  # libpq reads it for storage.url's password when the URL has none
    # Every URL written in the config (llm.base_url, checkin.github_api_url, ...), whose credentials are masked
    # like the rest: not read from the environment (see ``for_config``).
    config_endpoints: tuple[str, ...] = field(default=(), metadata={"internal": True})
    database_url: str = field(default="", metadata={"internal": True})  # storage.url, whose password is masked

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Secrets:
        env = os.environ if env is None else env
        names = [f.name for f in dataclasses.fields(cls) if not f.metadata.get("internal")]
        values: dict[str, Any] = {name: env.get(name.upper(), "").strip() for name in names}
        for name in _MULTI_LINE:
            values[name] = _pem_lines(values[name]).strip()
        for name, value in values.items():
            problem = not_text(value, from_bytes=True) or _control_character(
                value.replace("\r\n", "").replace("\n", "") if name in _MULTI_LINE else value)
            if problem:  # the value is a secret: say where it goes wrong, never what it holds
                raise ConfigError(f"{name.upper()} in the environment is not usable: {problem}; export it again "
                                  "as plain text")
        endpoint = values["openai_base_url"]
        if endpoint and http_url_problem(endpoint):
            raise ConfigError(f"OPENAI_BASE_URL in the environment {http_url_problem(endpoint)}, e.g. "
                              "http://127.0.0.1:8080/v1; export it again, or unset it to use OpenAI")
        return cls(**values)

    def for_config(self, config: Config) -> Secrets:
        """The same secrets, also masking credentials written into any URL of the config: a user name or password,
        and secret query values (``?access_token=``). storage.url is a database's, whose user name is no secret."""
        storage = dataclasses.replace(config.storage, url="")
        return dataclasses.replace(self, config_endpoints=tuple(dict.fromkeys(_urls_in(dataclasses.replace(
            config, storage=storage)))), database_url=config.storage.url)

    def values(self) -> list[str]:
        """Every secret that is set, for scrubbing text before it leaves the process: the tokens, and what
        credentials in ``OPENAI_BASE_URL`` or a configured endpoint URL reveal (``bot.safety.redact.url_secrets``)."""
        tokens = [getattr(self, f.name) for f in dataclasses.fields(self)
                  if not f.metadata.get("internal") and not f.metadata.get("public")
                  and f.name != "openai_base_url" and getattr(self, f.name)]
        # A key's lines are masked one by one too: a log or an error may quote one line of it.
        tokens += [line.strip() for name in _MULTI_LINE for line in getattr(self, name).splitlines()
                   if len(line.strip()) >= 16 and not line.startswith("-----")]
        return (tokens + [s for url in (self.openai_base_url, *self.config_endpoints) for s in url_secrets(url)]
                + database_url_secrets(self.database_url))

    def require(self, *names: str) -> None:
        for name in names:
            if not getattr(self, name):
                raise ConfigError(f"{name.upper()} is not set: export it in the environment before starting")


_MULTI_LINE = tuple(f.name for f in dataclasses.fields(Secrets) if f.metadata.get("lines"))


def _pem_lines(value: str) -> str:
    """A PEM as exported: with its line breaks, or on one line with them written ``\\n`` (as .env files and
    secret stores keep it)."""
    if "\n" not in value and "\\n" in value and value.startswith("-----BEGIN"):
        return value.replace("\\r\\n", "\n").replace("\\n", "\n")
    return value


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def _urls_in(value: object) -> list[str]:
    """Every URL among ``value``'s settings, in sections, tables and lists alike."""
    if isinstance(value, str):
        return [value] if _URL.fullmatch(value) else []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [url for f in dataclasses.fields(value) for url in _urls_in(getattr(value, f.name))]
    if isinstance(value, Mapping):
        return [url for item in value.values() for url in _urls_in(item)]
    if isinstance(value, list | tuple | set | frozenset):
        return [url for item in value for url in _urls_in(item)]
    return []


def _control_character(value: str) -> str:
    """A token or URL crosses into HTTP headers, where a control character (a line break) is refused late."""
    found = re.search("[\x00-\x1f\x7f]", value)
    return f"character {found.start() + 1} is a control character (U+{ord(found.group()):04X})" if found else ""


def find_config_path(explicit: str | None, env: Mapping[str, str] | None = None) -> Path | None:
    """``--config``, else ``$CODEGEN_CONFIG``, else ``./config.toml`` when present, else built-ins."""
    env = os.environ if env is None else env
    chosen = explicit or env.get(CONFIG_ENV)
    if chosen:
        return Path(chosen)
    local = Path(DEFAULT_CONFIG_FILE)
    return local if local.exists() else None


def _repositories_apart(data: dict[str, Any]) -> dict[str, Any]:
    """``[repos."owner/name"]`` tables moved under ``repos.allowed``, so ``[repos]`` keeps its plain keys."""
    repos = data.get("repos")
    if not isinstance(repos, dict):
        return data
    allowed = {key: value for key, value in repos.items() if "/" in key}
    plain = {key: value for key, value in repos.items() if "/" not in key}
    return {**data, "repos": {**plain, "allowed": allowed}} if allowed else data


def _as_written(message: str) -> str:
    """A repository's table named as config.toml writes it: ``repos."acme/billing".key``."""
    return re.sub(r"repos\.allowed\.([^.\s:]+)", r'repos."\1"', message)


SectionT = TypeVar("SectionT")


def with_flags(section: SectionT, **flags: tuple[str, Any]) -> SectionT:
    """``section`` with the values given on the command line (``--flag=(field, value)``); a value the section
    refuses is the person's mistake, refused naming their flag (``UserInputError``), not the config file's."""
    try:
        return dataclasses.replace(section, **dict(flags.values()))  # type: ignore[type-var]
    except SettingsError as error:
        flag = next((f for f, (name, _) in flags.items() if error.key.rpartition(".")[2] == name), "an argument")
        raise UserInputError(f"{flag}: {error.problem}") from None


MAX_CONFIG_BYTES = 1_000_000  # a config.toml is a few kilobytes; this stops /dev/zero, not a long file
CONFIG_FILE = Use("config files", "name the config.toml in it")


def load_config(path: Path | None) -> Config:
    """Read and check the whole config once; any problem is a ``ConfigError`` naming the key. Only a regular
    file is read, and only so much of it: a pipe, a device or a huge file is refused before it is read."""
    if path is None:
        return Config()
    try:
        data = read_regular_file(os.fspath(path), MAX_CONFIG_BYTES, CONFIG_FILE)
    except UserInputError as error:
        if not path.exists() and not path.is_symlink():
            raise ConfigError(f"{path}: no such config file (pass --config PATH or set {CONFIG_ENV})") from None
        raise ConfigError(f"cannot use the config file: {str(error).rstrip('.')}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (byte {data[error.start]:#04x} at offset {error.start}); "
                          "save it as UTF-8") from None
    text = text.removeprefix("\ufeff")  # the invisible mark some editors put first (Notepad's "UTF-8 with BOM")
    try:
        return dataclasses.replace(build(Config, _repositories_apart(parse_toml(text)), ""), source=str(path))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not a config file (arrays or tables nested deeper than any setting)") from None
    except SettingsError as error:
        raise ConfigError(f"{path}: {_as_written(str(error))}") from None
