"""GitHub pull requests: ``@codegen-chat`` in a pull request's conversation, a review comment or a review starts
a run on its branch, answered where it was asked; CI deliveries wake the CI follower. Translation only:

    app        serve: the webhook server (it answers the health probes too)
    webhook    a delivery in: its signature, a redelivery, CI nudges, comments handed on
    events     a delivery's payload as a comment or a commit
    handlers   a comment in (the loop guards, write access, forks, the opt-out label, the day's runs),
               ``Service.take`` out
    budget     runs per pull request per day
    api        the GitHub REST calls (PyGithub, in worker threads)
    platform   GitHub as the core sees it
    thread     the ChatThread: a pull request's conversation or one review thread
    markup     Markdown with the model's words kept inert (no pings, no HTML)
    signature  X-Hub-Signature-256
    doctor     the secret, the token, Actions' own GITHUB_TOKEN
"""

from adapters.github.app import serve
from adapters.github.doctor import doctor_checks
from bot.config.sections import Config
from bot.runs.plugin import PlatformPlugin


def _address(config: Config) -> tuple[str, int] | None:
    """The webhook server answers the health probes too."""
    return config.github.host, config.github.port


PLATFORM = PlatformPlugin("github", serve, doctor_checks,
                          secrets=("GITHUB_WEBHOOK_SECRET", "GITHUB_TOKEN", "GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY",
                                   "GITHUB_APP_INSTALLATION_ID"),
                          health_address=_address)

__all__ = ["PLATFORM", "doctor_checks", "serve"]
