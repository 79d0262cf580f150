"""As a GitHub App: the webhook's answers and the repository work use installation tokens the App mints itself."""

from __future__ import annotations

import dataclasses

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.git_server import FakeGitHost
from tests.fakes.github_server import FakeGitHub
from tests.github.conftest import AUTHOR, PR, REPO, SECRET, eventually, finals, script_team


async def test_an_app_answers_on_the_pull_request_with_the_installation_token_it_minted(
        github_config, start_bot, secrets, github: FakeGitHub, git_host: FakeGitHost, pull_request, model_server):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    github.add_app("4242", public, 77)
    git_host.also = github.tokens  # the git host takes what GitHub minted, as github.com does
    app_secrets = dataclasses.replace(secrets, github_webhook_secret=SECRET, github_app_id="4242",
                                      github_app_private_key=private, github_app_installation_id="77")
    script_team(model_server)
    bot = await start_bot(github_config, app_secrets)
    await bot.comment(github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat add retries to billing/client.py"))
    (final,) = await eventually(lambda: finals(github.conversation(REPO, PR)))
    assert final.body.startswith("✅ Passed:") and len(github.opened) == 1
    minted = {t for t in github.tokens if t.startswith("ghs_")}
    answers = [r for r in github.requests if r.path.startswith(f"/repos/{REPO}/issues/{PR}/comments")]
    assert answers and all(r.headers["Authorization"].removeprefix("token ") in minted for r in answers)
