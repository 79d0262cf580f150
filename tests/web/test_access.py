"""Who may use the web chat: safe by default (loopback), a token or a sign-in proxy beyond it, each person only
their own conversations, changes only from the page's own origin, and the security headers on every answer."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser

import pytest

import adapters.web
from adapters.web.access import CONTENT_SECURITY_POLICY, SESSION_COOKIE, SESSION_S, Gate, check_binding
from adapters.web.routes import STATIC
from bot.config.sections import ConfigError, WebConfig
from tests.conftest import with_changes
from tests.web.conftest import script_team

TOKEN = "web-token-0123456789abcdef0123456789"
API = ("/api/session", "/api/conversations", "/api/stream", "/api/conversations/abc/files.zip")


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "bot.example.com", "[::]"])
async def test_a_bind_beyond_loopback_without_a_token_refuses_to_start(start_web, web_config, host):
    config = with_changes(web_config, web={"host": host})
    with pytest.raises(ConfigError, match=r"web\.host .*CODEGEN_WEB_TOKEN.*web\.user_header"):
        await start_web(config)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_needs_no_token(host):
    check_binding(WebConfig(host=host), token="")


def test_beyond_loopback_a_token_or_a_proxy_header_will_do():
    check_binding(WebConfig(host="0.0.0.0"), token=TOKEN)
    check_binding(WebConfig(host="0.0.0.0", user_header="X-Forwarded-User"), token="")


def test_beyond_loopback_a_short_token_as_the_only_sign_in_refuses_to_start_without_saying_it():
    # Whoever reaches the page could guess it.
    with pytest.raises(ConfigError) as refused:
        check_binding(WebConfig(host="0.0.0.0"), token="letmein-2026")
    assert "has only 12 characters (at least 24)" in str(refused.value) and "letmein" not in str(refused.value)
    check_binding(WebConfig(host="127.0.0.1"), token="letmein-2026")  # this machine only: the doctor warns
    # Behind a sign-in proxy the token is asked for as well as the proxy's header, not instead of it.
    check_binding(WebConfig(host="0.0.0.0", user_header="X-Forwarded-User"), token="letmein-2026")


async def test_without_the_token_every_request_gets_401(start_web, web_config, secrets):
    bot = await start_web(web_config, secrets_=dataclasses.replace(secrets, codegen_web_token=TOKEN))
    for path in API:
        status, body, _ = await bot.get(path)
        assert status == 401 and body == {"error": "Sign in with the access token first."}, path
    status, body, _ = await bot.post("/api/conversations", {"task": "write a parser"})
    assert status == 401
    status, page, _ = await bot.get("/")
    assert status == 401 and 'action="/login"' in page and "Sign in with the access token first." in page
    for wrong in ("Bearer nope", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", TOKEN):
        status, _, _ = await bot.get("/api/session", headers={"Authorization": wrong})
        assert status == 401, wrong
    status, body, _ = await bot.get("/api/session", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and body["user"] == "token"


async def test_signing_in_sets_a_session_cookie_that_is_not_the_token(start_web, web_config, secrets):
    bot = await start_web(web_config, secrets_=dataclasses.replace(secrets, codegen_web_token=TOKEN))
    status, page, _ = await bot.post("/login", data={"token": "wrong"}, json=None)
    assert status == 401 and "That is not the access token." in page
    status, _, headers = await bot.post("/login", data={"token": TOKEN}, json=None)
    assert status == 303 and headers["Location"] == "/"
    cookie = headers["Set-Cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert TOKEN not in cookie and f"Max-Age={SESSION_S}" in cookie  # a week, not for as long as the browser keeps it
    session = re.match(rf"{SESSION_COOKIE}=([^;]+)", cookie).group(1)  # type: ignore[union-attr]
    status, body, _ = await bot.get("/api/conversations", headers={"Cookie": f"{SESSION_COOKIE}={session}"})
    assert status == 200 and body == {"conversations": []}
    status, _, _ = await bot.get("/api/conversations", headers={"Cookie": f"{SESSION_COOKIE}={session[:-1]}x"})
    assert status == 401


def test_a_session_lasts_a_week_and_is_made_only_under_the_token():
    now = [1_800_000_000.0]
    gate = dataclasses.replace(Gate.of(WebConfig(), TOKEN), clock=lambda: now[0])
    session = gate.new_session()

    def user(value: str) -> str | None:
        return gate.who({"cookie": f"{SESSION_COOKIE}={value}"}, "127.0.0.1").user

    assert user(session) == "token"
    now[0] += SESSION_S - 1
    assert user(session) == "token"
    now[0] += 1
    assert user(session) is None  # a cookie kept (or taken) from a browser works a week at most
    started, _, signature = session.partition(".")
    assert user(f"{int(now[0])}.{signature}") is None  # its start cannot be moved on
    other = dataclasses.replace(Gate.of(WebConfig(), TOKEN + "-rotated"), clock=lambda: now[0])
    assert user(other.new_session()) is None  # a new token ends every session made under the old one


async def test_signing_out_forgets_the_session_in_that_browser(start_web, web_config, secrets):
    bot = await start_web(web_config, secrets_=dataclasses.replace(secrets, codegen_web_token=TOKEN))
    _, _, headers = await bot.post("/login", data={"token": TOKEN}, json=None)
    session = re.match(rf"{SESSION_COOKIE}=([^;]+)", headers["Set-Cookie"]).group(1)  # type: ignore[union-attr]
    signed_in = {"Cookie": f"{SESSION_COOKIE}={session}"}
    status, _, _ = await bot.post("/logout", json=None, headers={**signed_in, "Origin": "https://evil.example"})
    assert status == 403  # nobody else's page signs a person out
    status, _, headers = await bot.post("/logout", json=None, headers=signed_in)
    assert status == 303 and headers["Location"] == "/"
    cleared = headers["Set-Cookie"]
    assert cleared.startswith(f'{SESSION_COOKIE}=""') and "Max-Age=0" in cleared
    status, page, _ = await bot.get("/")  # without the cookie: the sign-in page again
    assert status == 401 and 'action="/login"' in page


async def test_behind_a_proxy_each_person_sees_only_their_own_conversations(start_web, web_config, model_server):
    config = with_changes(web_config, web={"user_header": "X-Forwarded-User"})
    script_team(model_server)
    bot = await start_web(config)
    ann, bob = {"X-Forwarded-User": "ann@example.com"}, {"X-Forwarded-User": "bob@example.com"}
    status, started, _ = await bot.post("/api/conversations", {"task": "find all intf keys"}, headers=ann)
    assert status == 200
    key = started["conversation"]

    _, listed, _ = await bot.get("/api/conversations", headers=ann)
    assert [c["key"] for c in listed["conversations"]] == [key]
    _, listed, _ = await bot.get("/api/conversations", headers=bob)
    assert listed == {"conversations": []}
    for path in (f"/api/conversations/{key}", f"/api/stream?c={key}", f"/api/conversations/{key}/files.zip"):
        status, body, _ = await bot.get(path, headers=bob)
        assert status == 404 and "No such conversation" in body["error"], path
    status, _, _ = await bot.post(f"/api/conversations/{key}/tasks", {"task": "now make it async"}, headers=bob)
    assert status == 404
    status, body, _ = await bot.post(f"/api/runs/{started['run']}/stop", headers=bob)
    assert status == 403 and body["error"] == "Only the person who started this run can stop it."
    status, _, _ = await bot.get("/api/session")  # no header: not through the proxy
    assert status == 401


async def test_the_proxy_header_is_believed_only_from_the_proxy(start_web, web_config):
    config = with_changes(web_config, web={"user_header": "X-Forwarded-User", "proxy_addresses": ("192.0.2.1",)})
    bot = await start_web(config)
    status, body, _ = await bot.get("/api/session", headers={"X-Forwarded-User": "ann@example.com"})
    assert status == 401 and body == {"error": "Sign in through the proxy in front of this bot."}


async def test_on_loopback_another_host_name_is_refused(start_web, web_config):
    """A page elsewhere that rebinds its own name to 127.0.0.1 reaches the port, but with its Host header."""
    bot = await start_web(web_config)
    for host in ("evil.example", f"evil.example:{web_config.web.port}", "127.0.0.1:1"):
        status, _, _ = await bot.get("/api/conversations", headers={"Host": host})
        assert status == 403, host
    for host in (f"127.0.0.1:{web_config.web.port}", f"localhost:{web_config.web.port}"):
        status, _, _ = await bot.get("/api/conversations", headers={"Host": host})
        assert status == 200, host


async def test_changes_are_taken_from_the_page_s_own_origin_only(start_web, web_config, model_server):
    bot = await start_web(web_config)
    for origin in ("https://evil.example", "null", f"http://localhost:{web_config.web.port + 1}"):
        status, body, _ = await bot.post("/api/conversations", {"task": "write a parser"}, headers={"Origin": origin})
        assert status == 403 and body == {"error": "Changes come from this bot's own page only."}, origin
    # A form post from elsewhere cannot even carry the task: the API takes JSON only.
    status, body, _ = await bot.post("/api/conversations", data="task=x", json=None,
                                     headers={"Content-Type": "text/plain"})
    assert status == 400 and body == {"error": "Send the task as JSON, the way the page does."}
    _, listed, _ = await bot.get("/api/conversations")
    assert listed == {"conversations": []} and not model_server.requests


@pytest.mark.parametrize("proxies_say", [["https, http"], ["https", "http"]])
async def test_the_page_s_own_origin_behind_proxies_that_each_add_their_scheme(start_web, web_config, model_server,
                                                                             proxies_say):
    from multidict import CIMultiDict

    bot = await start_web(web_config)
    here = f"127.0.0.1:{web_config.web.port}"
    for origin, allowed in ((f"https://{here}", True), ("https://evil.example", False)):
        headers = CIMultiDict([("Origin", origin), *(("X-Forwarded-Proto", said) for said in proxies_say)])
        status, body, _ = await bot.post("/api/conversations", {"task": "write a parser"}, headers=headers)
        assert (status != 403) is allowed, (origin, status, body)


async def test_every_answer_carries_a_policy_that_forbids_inline_script(start_web, web_config):
    bot = await start_web(web_config)
    for path in ("/", "/c/whatever", "/api/session", "/static/app.js", "/api/conversations/nope"):
        _, _, headers = await bot.get(path)
        assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, path
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["X-Frame-Options"] == "DENY"
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe-inline" not in CONTENT_SECURITY_POLICY


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []
        self.handlers: list[str] = []
        self.sources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        self.handlers += [name for name in names if name.startswith("on")]
        if tag == "script":
            if names.get("src"):
                self.sources.append(names["src"] or "")
            else:
                self.inline.append(tag)


@pytest.mark.parametrize("page", ["index.html", "login.html"])
def test_the_pages_carry_no_inline_script_and_load_nothing_from_elsewhere(page):
    found = _Scripts()
    found.feed((STATIC / page).read_text(encoding="utf-8"))
    assert not found.inline and not found.handlers
    assert all(src.startswith("/static/") for src in found.sources)
    text = (STATIC / page).read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text


async def test_the_page_and_its_vendored_libraries_are_served(start_web, web_config):
    bot = await start_web(web_config)
    for name in (*adapters.web.server.VENDORED, "app.js", "app.css"):
        status, body, _ = await bot.get(f"/static/{name}")
        assert status == 200 and len(body) > 500, name
    status, _, _ = await bot.get("/static/../routes.py")
    assert status == 404


PROXY = {"user_header": "X-Forwarded-User"}


async def test_a_forwarded_for_header_naming_the_proxy_does_not_make_a_request_the_proxy_s(start_web, web_config):
    """The proxy is judged by the connection's own peer: anyone can write X-Forwarded-For."""
    config = with_changes(web_config, web={**PROXY, "proxy_addresses": ("192.0.2.1",)})
    bot = await start_web(config)
    for forwarded in ("192.0.2.1", "192.0.2.1, 127.0.0.1", "127.0.0.1, 192.0.2.1"):
        headers = {"X-Forwarded-User": "ann@example.com", "X-Forwarded-For": forwarded}
        status, body, _ = await bot.post("/api/conversations", {"task": "write a parser"}, headers=headers)
        assert status == 401 and body == {"error": "Sign in through the proxy in front of this bot."}, forwarded
        status, _, _ = await bot.get("/api/session", headers={**headers, "Forwarded": "for=192.0.2.1"})
        assert status == 401, forwarded


async def test_a_proxy_that_adds_forwarded_for_itself_still_signs_people_in(start_web, web_config):
    """oauth2-proxy names the person's own address in X-Forwarded-For; the peer is still the proxy."""
    bot = await start_web(with_changes(web_config, web=PROXY))
    headers = {"X-Forwarded-User": "ann@example.com", "X-Forwarded-For": "203.0.113.7", "X-Real-IP": "203.0.113.7"}
    status, body, _ = await bot.get("/api/session", headers=headers)
    assert status == 200 and body["user"] == "ann@example.com"


async def test_a_request_naming_two_people_in_the_proxy_s_header_is_believed_as_neither(start_web, web_config):
    """A proxy that adds its header beside the one the sender wrote passes both on: whichever came first or last,
    the sender's must not be the one believed."""
    bot = await start_web(with_changes(web_config, web=PROXY))
    for pair in (("mallory", "ann@example.com"), ("ann@example.com", "mallory")):
        headers = [("X-Forwarded-User", pair[0]), ("X-Forwarded-User", pair[1])]
        status, body, _ = await bot.get("/api/session", headers=headers)
        assert status == 401 and body == {"error": "Sign in through the proxy in front of this bot."}, pair
    status, body, _ = await bot.get("/api/session", headers={"X-Forwarded-User": "ann@example.com"})
    assert status == 200 and body["user"] == "ann@example.com"


async def test_behind_a_proxy_that_sends_its_own_host_the_page_s_changes_are_taken(start_web, web_config,
                                                                                 model_server):
    # nginx's default (proxy_set_header Host $proxy_host) sends the bot's own address as Host, while the browser's
    # Origin names the public one: a name in allowed_hosts is the page's own origin too.
    script_team(model_server)
    bot = await start_web(with_changes(web_config, web={**PROXY, "allowed_hosts": ("chat.example.com",)}))
    proxied = {"X-Forwarded-User": "ann@example.com", "Host": f"127.0.0.1:{web_config.web.port}"}
    status, body, _ = await bot.post("/api/conversations", {"task": "find all intf keys"},
                                     headers={**proxied, "Origin": "https://chat.example.com"})
    assert status == 200, body
    for elsewhere in ("https://evil.example", "https://chat.example.com.evil.example", "null",
                      "http://chat.example.com:3000"):  # another site on the same name
        status, body, _ = await bot.post("/api/conversations", {"task": "find all intf keys"},
                                         headers={**proxied, "Origin": elsewhere})
        assert status == 403 and body == {"error": "Changes come from this bot's own page only."}, elsewhere


@pytest.mark.parametrize("addresses", [("127.0.0.0/8",), ("10.0.0.0/8", "127.0.0.1/32"), ("::ffff:127.0.0.0/104",)])
async def test_proxy_addresses_may_name_networks(start_web, web_config, addresses):
    bot = await start_web(with_changes(web_config, web={**PROXY, "proxy_addresses": addresses}))
    status, body, _ = await bot.get("/api/session", headers={"X-Forwarded-User": "ann@example.com"})
    assert status == 200 and body["user"] == "ann@example.com", addresses


@pytest.mark.parametrize("entry", ["proxy.internal", "localhost", "10.0.0.0/33", "127.0.0.1:4180", "*"])
def test_a_proxy_address_that_could_never_match_is_refused_at_start(tmp_path, entry):
    from bot.config.sections import load_config

    (tmp_path / "config.toml").write_text(f'[web]\nuser_header = "X-Forwarded-User"\nproxy_addresses = ["{entry}"]\n')
    with pytest.raises(ConfigError, match=rf"web\.proxy_addresses: '{re.escape(entry)}' is not an IP address or network"):
        load_config(tmp_path / "config.toml")


async def test_behind_a_proxy_a_host_name_not_allowed_is_refused(start_web, web_config):
    """A DNS-rebinding page in a browser on the proxy's machine reaches the port with its own Host header, and
    could send any user header it likes from the proxy's address."""
    port = web_config.web.port
    config = with_changes(web_config, web={**PROXY, "allowed_hosts": ("chat.example.com", "other.example:8443")})
    bot = await start_web(config)
    ann = {"X-Forwarded-User": "ann@example.com"}
    for host in ("evil.example", f"evil.example:{port}", "chat.example.com.evil.example", "other.example:9000",
                 "127.0.0.1:1", ""):
        status, body, _ = await bot.post("/api/conversations", {"task": "write a parser"}, headers={**ann, "Host": host})
        assert status == 403 and "web.allowed_hosts" in body["error"], host
    for host in ("chat.example.com", "CHAT.example.com:443", "other.example:8443", f"127.0.0.1:{port}",
                 f"localhost:{port}"):
        status, body, _ = await bot.get("/api/session", headers={**ann, "Host": host})
        assert status == 200 and body["user"] == "ann@example.com", host


@pytest.mark.parametrize("entry", ["chat.example.com/", "https://chat.example.com", "chat example", "a@b"])
def test_an_allowed_host_that_is_not_a_host_name_is_refused_at_start(tmp_path, entry):
    from bot.config.sections import load_config

    (tmp_path / "config.toml").write_text(f'[web]\nallowed_hosts = ["{entry}"]\n')
    with pytest.raises(ConfigError, match=r"web\.allowed_hosts: .* is not a host name"):
        load_config(tmp_path / "config.toml")


@pytest.mark.parametrize(("proxies", "secure"), [(("127.0.0.1",), True), (("192.0.2.1",), False)])
async def test_the_session_cookie_is_secure_when_a_listed_proxy_says_the_page_came_over_https(
        start_web, web_config, secrets, proxies, secure):
    config = with_changes(web_config, web={"proxy_addresses": proxies})
    bot = await start_web(config, secrets_=dataclasses.replace(secrets, codegen_web_token=TOKEN))
    _, _, headers = await bot.post("/login", data={"token": TOKEN}, json=None, headers={"X-Forwarded-Proto": "https"})
    assert ("Secure" in headers["Set-Cookie"]) is secure


async def test_doctor_warns_when_behind_a_proxy_no_host_name_is_allowed(web_config, secrets):
    from tests.web.test_commands import by_name

    results = by_name(await adapters.web.doctor_checks(with_changes(web_config, web=PROXY), secrets))
    assert not results["web chat hosts"].ok and not results["web chat hosts"].required
    assert "allowed_hosts" in results["web chat hosts"].fix
    config = with_changes(web_config, web={**PROXY, "allowed_hosts": ("chat.example.com",)})
    assert "web chat hosts" not in by_name(await adapters.web.doctor_checks(config, secrets))


@pytest.mark.browser
async def test_in_the_browser_the_sign_in_form_signs_in_and_sign_out_signs_out(start_web, web_config, secrets,
                                                                              open_page):
    # The form is a post from the page's own origin: the browser must say so (with no referrer at all, it sends
    # "Origin: null", which the bot refuses as any other origin).
    from playwright.async_api import expect

    bot = await start_web(web_config, secrets_=dataclasses.replace(secrets, codegen_web_token=TOKEN))
    page = await open_page(bot.url)
    await page.fill("#token", TOKEN)
    await page.click("button[type=submit]")
    await expect(page.locator("#who")).to_have_text("Signed in as token", timeout=10_000)
    _, _, headers = await bot.get("/login")
    assert headers["Referrer-Policy"] == "same-origin"  # and still nothing about the page to other sites
    await page.click("#sign-out button")
    await expect(page.locator("#token")).to_be_visible(timeout=10_000)
    await page.goto(bot.url)
    await expect(page.locator("#token")).to_be_visible(timeout=10_000)  # the session is gone from the browser
