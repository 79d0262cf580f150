"""The Docker sandbox: runs a job's tests in a fresh, locked-down container and reports what it saw.

One run: wait for a slot (the concurrency cap) -> take a warm container or start one -> (the user's tests
first: unpack them as the sandbox's own user, read-only to the team's code, ``judge``) -> stage the files
-> unpack them and run the dependency setup when the files call for it (registry packages only,
``dependencies``; network only then, per config), in one command -> cut the network -> the test command
(the first command when there was no setup), its output capped as it streams, killed from outside at the
deadline -> read the counts from the runner's sealed report -> remove the container: in the background
once the run has its report (``close()`` waits for it), before a cancellation completes. Before each
step the container gets its own deadline, so it ends by itself should this process die.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import secrets
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import docker

from agents.errors import SandboxError
from agents.language import BUILT_IN
from agents.types import TestJob, TestReport, TestStatus
from bot.config.sections import LanguageConfig, SandboxConfig
from bot.sandbox import containers, dependencies, judge, reports, setup_network
from bot.sandbox.authority import REPORT_SEPARATOR, Authority, quoted
from bot.sandbox.authority.table import authority_for
from bot.sandbox.client import ENGINE_ERRORS, check_runtime, engine_failed, open_checked, runtime_ended, short_error
from bot.sandbox.files import UNPACK_EXIT, UNPACK_FAILED, staged
from bot.sandbox.hardening import BETWEEN_STEPS_S, DEADLINE_GRACE_S, DEADLINE_UNSET, keeper_user, set_deadline
from bot.sandbox.hollow import hollow_tests
from bot.sandbox.images import listed_images, missing_image, present_image
from bot.sandbox.languages import language_of, languages
from bot.sandbox.output import SplitOutput
from bot.sandbox.pool import WarmPool
from bot.sandbox.reports import StepResult

DRAIN_GRACE_S = 5.0  # after a kill, how long the output reader may take to notice
POLL_S = 1.0  # how often a long command is checked for having exited while its output stays open
LINGER_S = 1.0  # output still read after the command exited
REPORT_LIMIT = 4_000_000  # bytes of a runner's structured report read back
REPORT_READS = 2  # a report read the engine cut short is tried again this many times in all
# Run as the command user: stops whatever the team's code left running (the keeper is another user).
STOP_LEFTOVERS = "kill -9 -1 2>/dev/null; "
T = TypeVar("T")
log = logging.getLogger(__name__)
# What a run's tests run in: a Docker ``Container`` here, a Pod of a subclass's engine there (``kubernetes``).
Box = Any


class DockerSandbox:
    """``agents.protocols.Sandbox`` on a Docker engine. Use ``async with`` (or ``close()``) to clean up."""

    def __init__(self, config: SandboxConfig, client: docker.DockerClient | None = None) -> None:
        self._config = config
        self._languages = languages(config)
        self._client = client
        self._owns_client = client is None
        self._slots = asyncio.Semaphore(config.concurrency)
        self._ready = asyncio.Lock()
        self._started = False
        self._closed = False
        # Without a warm pool it keeps nothing, and holds only the containers runs asked to have prepared.
        self._pool = WarmPool(config.warm_pool_size if config.warm_pool else 0, self._start_for, self._remove)
        self._threads = ThreadPoolExecutor(max_workers=2 * config.concurrency + 8, thread_name_prefix="sandbox")
        self._holding: set[_Held] = set()  # what the runs under way hold in Docker
        self._removing: set[asyncio.Task[None]] = set()  # what returned runs held, on its way out
        self._images: dict[str, str] = {}  # language -> the image found for it on this engine
        self.active = 0  # containers running a job now (observable by tests and benchmarks)
        self.peak_active = 0

    async def __aenter__(self) -> DockerSandbox:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Connect, and reap the containers a crashed earlier process left behind. Idempotent."""
        async with self._ready:
            if self._started:
                return
            await self._connect()
            self._started = True

    async def _connect(self) -> None:
        """Reach the engine, check its runtime and reap what a crashed earlier process left."""
        if self._client is None:
            self._client = await open_checked(self._config)
        try:
            await self._call(check_runtime, self._client, self._config)
            await self._call(containers.reap_orphans, self._client)
        except ENGINE_ERRORS as error:
            raise engine_failed(error, "the start") from None

    async def ready(self) -> None:
        """Before a run's first model call: the engine answers (leftovers reaped), and sandbox images are
        present. None at all is an error that says how to build them; some missing is a warning."""
        await self.start()
        missing = await self.missing_images()
        if len(missing) == len(self._languages):
            raise SandboxError("no sandbox image is present: run `codegen-chat sandbox build` first (it builds "
                               "the images from Debian packages when no registry answers)")
        if missing:
            log.warning("no sandbox image for %s: runs in those languages fail until `codegen-chat sandbox "
                        "build` makes them", ", ".join(missing))

    async def missing_images(self, names: Iterable[str] | None = None) -> list[str]:
        """The languages (all configured ones by default) for which this engine has no image."""
        await self.start()
        wanted = sorted(names if names is not None else self._languages)
        # Found once, an image is kept (``_image``): the list is asked for only while several are still to find.
        unknown = [name for name in wanted if name not in self._images]
        listed = await self._listed_images() if len(unknown) > 1 else None
        missing = []
        for name in wanted:
            try:
                await self._image(name, self._language(name), listed)
            except SandboxError:
                missing.append(name)
        return missing

    async def close(self) -> None:
        """Remove the idle warm containers and whatever runs still hold, finish the removals under way, close
        our client. Final."""
        self._closed = True
        await self._pool.close()
        # Runs still going lose their containers now rather than leave them behind; used ones finish going.
        await asyncio.gather(*(self._let_go(held) for held in list(self._holding)), *list(self._removing),
                             return_exceptions=True)
        if self._owns_client and self._client is not None:
            await self._call(self._client.close)
        self._threads.shutdown(wait=False)

    def warm(self, language: str) -> None:
        """Have the pool start containers for ``language`` now (no-op without a warm pool)."""
        self._language(language)
        self._pool.fill(language)

    def prepare(self, language: str) -> None:
        """``agents.protocols.PreparedSandbox``: a test run in ``language`` comes soon, so start its container now,
        while the team's models write. A hint: a language without a sandbox is left for ``run`` to report."""
        if self._config.enabled and not self._closed and language in self._languages:
            self._pool.prepare(language)

    async def settle(self) -> None:
        """Wait for the work a run leaves in the background: its used containers removed, the pool's new
        ones started."""
        await asyncio.gather(*list(self._removing), return_exceptions=True)
        await self._pool.settle()

    def warm_ready(self, language: str) -> int:
        """How many started, unused containers wait for ``language`` right now."""
        return self._pool.ready(language)

    async def run(self, job: TestJob) -> TestReport:
        if not self._config.enabled:
            raise SandboxError("tests are not run: the sandbox is disabled ([sandbox] enabled = false)")
        if self._closed:
            raise SandboxError("the sandbox was used after it was closed")
        language = _for_job(self._language(job.language), job)
        await self.start()
        # A job's own limit (the run's remaining time budget) can only shorten the configured one.
        limit_s = min(job.timeout_s, self._config.timeout_s) if job.timeout_s else self._config.timeout_s
        await self._slots.acquire()
        self.active += 1
        self.peak_active = max(self.peak_active, self.active)
        held = _Held()
        self._holding.add(held)
        report = None
        try:
            report = await self._run(job, language, limit_s, held)
            return report
        except Exception as error:
            if not isinstance(error, self.engine_errors):
                raise
            raise self._engine_failed(error) from None
        finally:
            if report is not None and not self._closed:
                self._release_later(held)
            else:
                # Shielded: a cancelled run still removes its container before the cancellation completes.
                await asyncio.shield(self._release(held))
            self._pool.fill(job.language)  # a warm container for the next run, started now the tests are done

    engine_errors: ClassVar[tuple[type[Exception], ...]] = ENGINE_ERRORS  # what an engine that failed raises

    def _engine_failed(self, error: BaseException) -> SandboxError:
        if self._config.runtime:
            return runtime_ended(self._config.runtime, error)
        return engine_failed(error)

    def _release_later(self, held: _Held) -> None:
        """A run that reported: its containers are removed off its path, in a task ``close()`` (and
        ``settle()``) waits for; its slot is free once they are gone, so the cap bounds the containers that
        exist, not only the busy ones. A process killed before that removes them at its next start; until
        then each stops by itself at its deadline."""
        self._holding.discard(held)
        self.active -= 1
        removal = asyncio.get_running_loop().create_task(self._let_go(held))
        self._removing.add(removal)
        removal.add_done_callback(self._removing.discard)
        removal.add_done_callback(lambda _: self._slots.release())

    async def _release(self, held: _Held) -> None:
        try:
            if not self._closed:  # else close() removed them
                await self._let_go(held)
        finally:
            self._holding.discard(held)
            self.active -= 1
            self._slots.release()

    async def _let_go(self, held: _Held) -> None:
        """Remove a run's containers and setup network. An engine that went away cannot: the container's
        own deadline stops it, and the next start reaps it."""
        try:
            for container in held.containers:
                await self._remove(container)
            if held.egress is not None:
                await self._call(setup_network.close, self._client_(), held.egress)
        except Exception as error:
            if not isinstance(error, (*self.engine_errors, SandboxError)):
                raise
            log.warning("could not remove a sandbox container: %s", short_error(error))

    async def _run(self, job: TestJob, language: LanguageConfig, limit_s: float, held: _Held) -> TestReport:
        if job.command:  # a repository's own tests: its tree is its own; the team's files are the ones checked
            return await self._run_repository(job, language, limit_s, held)
        user = [path for path in job.authoritative if path in job.files]
        runner = authority_for(job.language, self._config)
        # A switch that turns tests off or runs them through another program is refused for anyone's tests.
        if runner is not None and (why := runner.refusal(job.files, user)):
            return reports.refused(why, which="the user's tests" if user else "the tests")
        authority = runner if user else None
        if authority is None and (why := self._hollow(job, user) or (runner.team_refusal(job.files) if runner else "")):
            return reports.refused(why, which="the tests")  # anyone's: `sandbox run DIR` tests a user's folder
        setup = _needs_setup(language, job.files)
        if setup and runner is not None and (why := dependencies.refusal(job.files, language.setup_when)):
            return reports.refused(why, which="the tests")
        network = setup and self._setup_has_network()
        container = await self._pool.claim(job.language) if not network else None
        if container is None:
            if network:
                held.egress = await self._open_egress()
            container = await self._start(job.language, language, held.egress.name if held.egress else None)
        held.containers.append(container)
        # Enforced inside the container too: before each step the container gets the deadline at which it stops
        # by itself, even if this process dies (``hardening.KEEPER``, ``_step``).
        if authority is None:
            return await self._run_one_pass(container, job, language, setup, held, limit_s, runner, user)
        return await self._run_user_first(container, job, language, setup, held, limit_s, authority, user)

    async def _run_repository(self, job: TestJob, language: LanguageConfig, limit_s: float, held: _Held) -> TestReport:
        theirs = [path for path in job.files if path not in set(job.team_files)]
        runner = authority_for(job.language, self._config)
        if runner is not None and (why := runner.refusal(job.files, theirs)):
            return reports.refused(why, which="the repository's tests")
        if why := self._hollow(job, theirs):
            return reports.refused(why, which="the repository's tests")
        setup = _needs_setup(language, job.files)
        network = setup and self._setup_has_network()
        if network:
            held.egress = await self._open_egress()
        container = await self._start(job.language, language, held.egress.name if held.egress else None)
        held.containers.append(container)
        # The repository's tree is its own: built and tested as it is, counted the way the language's runner
        # counts (its guard), each step under the deadline the container keeps by itself.
        return await self._run_one_pass(container, job, language, setup, held, limit_s, runner, [])

    async def _run_one_pass(self, container: Box, job: TestJob, language: LanguageConfig, setup: bool,
                            held: _Held, limit_s: float, guard: Authority | None, user: list[str]) -> TestReport:
        """The configured test command over all the files. The user's files (a language of the config's can
        have them too) are the sandbox's own user's, read-only to the rest, as in a user pass."""
        token = secrets.token_hex(8)
        files = {**job.files, **guard.team_files(job.files)} if guard else job.files
        if user:
            await self._stage_read_only(container, job, language, user)
            files = {path: text for path, text in files.items() if path not in user}
        # The team's test files are the sandbox's own user's too, unpacked as it arms the first step: the code's build
        # script (a Rust build.rs) or the code at run time rewrote them into tests that pass. A repository's tree is
        # its own, as it is.
        tests = _team_tests(job, job.files) if guard is not None and not job.command else []
        judged = await self._judged(container, job, language, tests, folders=not user)
        first = language.setup_command if setup else _test_command(language)
        unpack_then_first = await self._stage(container, {p: t for p, t in files.items() if p not in tests}, language,
                                              first)
        if setup:
            report = await self._setup(container, language, held, unpack_then_first, judged)
            if report is not None:
                return report
            # The setup ran the team's code: stop what it left running before the report's channel exists.
            await self._stop_leftovers(container)
        test = unpack_then_first if not setup else ["sh", "-c", _test_command(language)]
        step = await self._step(container, test, language.workdir, limit_s, guard.team_env(token) if guard else None,
                                seal=_reports(language), judged="" if setup else judged)
        written = await self._written(container, language, step)
        report = reports.single(step, language, self._config, written)
        team = guard is not None and not job.command  # a repository's tests may skip as they always did
        if team:
            report = reports.all_ran(report, language, step.stdout, written)
        report = reports.guarded(report, guard, step, token, files)
        if team:  # (after the guard: a test binary that ended early is said so, not as tests that never ran)
            report = reports.all_collected(report, job.files, language, written, step.stdout)
            report = reports.none_said_failed(report, language, step.stdout, step.stderr)
        return report

    async def _run_user_first(self, container: Box, job: TestJob, language: LanguageConfig, setup: bool,
                              held: _Held, limit_s: float, authority: Authority, user: list[str]) -> TestReport:
        """The user's tests alone, locked down and judged per file; then the team's, as configured.

        The user's files are unpacked first, by the sandbox's own user (``judge``): nothing the team's code
        does afterwards, in the setup, a build step or the tests, can change, remove or replace them."""
        present = authority.pass_files(job.files, user)
        team_tests = {path: text for path, text in job.files.items() if path not in present}
        theirs = theirs_all = {path: text for path, text in present.items() if path not in user}
        token = secrets.token_hex(8)  # frames the user's files' sections of the output
        command = authority.command(user, present, language.workdir, token)
        await self._stage_read_only(container, job, language, user)
        if setup:
            report = await self._setup(container, language, held, await self._stage(
                container, theirs, language, language.setup_command))
            if report is not None:
                return report
            # The setup ran the team's code: stop what it left running.
            await self._stop_leftovers(container)
            theirs = {}
        paths = authority.report_paths(user)
        argv = await self._stage(container, theirs, language, "".join(map(judge.await_fifo, paths)) + command)
        budget = self._config.max_output_bytes // (2 if team_tests else 1)
        step = await self._step(container, argv, language.workdir, limit_s, output_limit=budget, seal=paths)
        written = "" if step.timed_out or step.ended else await self._read_reports(container, paths)
        verdict = authority.verdict(user, job.files, step.stdout, written, token, language.workdir)
        shown = authority.shown(step.stdout, token)
        team = None
        if why := self._hollow(job, user) or authority.team_refusal(team_tests):
            team = reports.refused(why, which="the team's tests")
        elif team_tests and not step.timed_out and not step.ended:
            await self._stop_leftovers(container)
            await self._as_judge(container, f"cd {quoted([language.workdir])} && rm -f -- {quoted(user)}")
            team_files = {**team_tests, **authority.team_files({**team_tests, **theirs_all})}
            tests = _team_tests(job, team_tests)
            judged = await self._judged(container, job, language, tests, folders=False)  # (the folders are there)
            argv = await self._stage(container, {p: t for p, t in team_files.items() if p not in tests}, language,
                                     _test_command(language))
            team_step = await self._step(container, argv, language.workdir, max(limit_s - step.duration_s, 1.0),
                                         authority.team_env(token), output_limit=budget, seal=_reports(language),
                                         judged=judged)
            team_written = await self._written(container, language, team_step)
            team = reports.all_ran(reports.single(team_step, language, self._config, team_written), language,
                                   team_step.stdout, team_written)
            team = reports.guarded(team, authority, team_step, token, {**theirs_all, **team_files})
            team = reports.all_collected(team, {**theirs_all, **team_tests}, language, team_written, team_step.stdout)
            team = reports.none_said_failed(team, language, team_step.stdout, team_step.stderr)
        return reports.combined(user, shown, step, verdict, team, self._config)

    async def _stage_read_only(self, container: Box, job: TestJob, language: LanguageConfig, paths: list[str]) -> None:
        """The container's deadline for the staging, every folder of the job (sticky) and the user's test files at
        ``paths``, as the sandbox's own user, before any file of the team's is in the container: read-only to
        everything the team's code runs."""
        before = set_deadline(BETWEEN_STEPS_S) + judge.folders(job.files, language.workdir)
        argv = await self._stage(container, {path: job.files[path] for path in paths}, language, "exit 0", before,
                                 as_judge=True)
        code, text = await self._quiet(container, argv, self._judge_user, "/")
        if code == UNPACK_EXIT and DEADLINE_UNSET in text:
            raise self._keeper_gone()
        if code != 0:
            raise SandboxError(f"could not copy the user's tests into the sandbox (exit {code}): {text[:500]}")

    async def _judged(self, container: Box, job: TestJob, language: LanguageConfig, paths: list[str],
                      folders: bool) -> str:
        """Shell the sandbox's own user runs as it arms the next step (``_arm``), no exec of its own: every folder of
        the job made sticky (when ``folders``; none is there yet) and the test files at ``paths`` unpacked, read-only
        to everything the team's code runs. '' when there are none."""
        if not paths:
            return ""
        before = judge.folders(job.files, language.workdir) if folders else ""
        argv = await self._stage(container, {path: job.files[path] for path in paths}, language, "exit 0", before,
                                 as_judge=True)
        return f"{shlex.join(argv)} || exit {UNPACK_EXIT}; "

    def _keeper_gone(self) -> SandboxError:
        """The container's first process is gone before the run began: under a configured runtime, its doing."""
        if self._config.runtime:
            return runtime_ended(self._config.runtime, SandboxError("its first process is gone"))
        return SandboxError("the sandbox container did not take its deadline (its first process is gone)")

    def _hollow(self, job: TestJob, user: list[str]) -> str:
        """Why the team's tests would pass without testing, for a built-in language that can tell."""
        if job.language == "python" and job.language not in self._config.languages:
            return hollow_tests(job.files, user)
        return ""

    async def _written(self, container: Box, language: LanguageConfig, step: StepResult) -> str | None:
        """The structured report the language's test command wrote ('' when it wrote none), or None when
        the language keeps none (its counts come from the output)."""
        if not language.report_file:
            return None
        return "" if step.timed_out or step.ended else await self._read_sealed(container, language.report_file)

    async def _read_sealed(self, container: Box, path: str) -> str:
        """The report the runner wrote at ``path``, as sealed when it closed it; read after stopping anything
        the tests left running (one could hold the channel open)."""
        await self._stop_leftovers(container)
        for _ in range(REPORT_READS):
            end = secrets.token_hex(8)
            script = set_deadline(BETWEEN_STEPS_S) + judge.read_sealed(path, end)  # the step is over: a short deadline
            _, text = await self._quiet(container, ["sh", "-c", script], self._judge_user, "/", 2 * REPORT_LIMIT,
                                        exit_code=False)
            if DEADLINE_UNSET in text:
                raise self._keeper_gone()
            report = judge.report_read(text, end)
            if report is not None:
                return report
            # The sealed copy stays where it is: a read the engine cut short is read again, never taken for no
            # report (that would fail tests that passed).
            log.warning("reading a test report back from the sandbox was cut short: %s", text[-300:])
        raise SandboxError(f"the test report could not be read back from the sandbox ({REPORT_READS} tries were "
                           "cut short): the container engine is failing; try again")

    async def _read_reports(self, container: Box, paths: list[str]) -> str:
        """The user pass's sealed reports: one as it is, several each after a ``REPORT_SEPARATOR`` line."""
        if len(paths) == 1:
            return await self._read_sealed(container, paths[0])
        return "".join([f"{REPORT_SEPARATOR} {index}\n{await self._read_sealed(container, path)}\n"
                        for index, path in enumerate(paths)])

    async def _arm(self, container: Box, seconds: float, seal: Sequence[str] = (), judged: str = "") -> None:
        """The container stops by itself ``seconds`` from now (``hardening.KEEPER``), unless armed again; the shell
        ``judged`` runs (``_judged``), and the sandbox's own reader of each report a runner is about to write at a
        path of ``seal`` starts (``judge``), in the same command (one exec less per test run)."""
        script = set_deadline(seconds) + judged + (f"armed=$?; {judge.sealing(seal)}exit $armed" if seal else "")
        code, text = await self._quiet(container, ["sh", "-c", script], self._judge_user, "/")
        if code == UNPACK_EXIT and UNPACK_FAILED in text:
            raise SandboxError(f"could not copy the tests into the sandbox: {text[-500:]}")
        if code != 0:
            raise self._keeper_gone()

    async def _as_judge(self, container: Box, script: str) -> None:
        code, text = await self._quiet(container, ["sh", "-c", script], self._judge_user, "/")
        if code != 0:
            raise SandboxError(f"a sandbox step failed (exit {code}): {text[:500]}")

    def _setup_has_network(self) -> bool:
        """Whether the dependency setup gets its way out to the registries (``setup_network``)."""
        return self._config.setup_network and bool(self._config.setup_allowed_hosts)

    async def _quiet(self, container: Box, argv: list[str], user: str, workdir: str,
                     limit: int = 64 * 1024, exit_code: bool = True) -> tuple[int | None, str]:
        """A short helper command (staging, arming the deadline, reading a report): its exit code and output.
        ``exit_code=False``: no code (None), for a command whose output is all that counts; the engine is asked
        one thing less (each test run has several such commands)."""
        output = SplitOutput(limit)
        exec_id, _ = await self._exec(container, argv, user, workdir, output)
        out, err = output.texts()
        if not exit_code:
            return None, out + err
        return await self._call(containers.exit_code, self._client_(), exec_id), out + err

    async def _stop_leftovers(self, container: Box) -> None:
        # Its output ends when the command does (``_exec`` reads to the end): nothing to ask the engine after.
        await self._quiet(container, ["sh", "-c", STOP_LEFTOVERS], self._config.user, "/", exit_code=False)

    @property
    def _judge_user(self) -> str:
        return keeper_user(self._config)

    async def _setup(self, container: Box, language: LanguageConfig, held: _Held,
                     argv: list[str], judged: str = "") -> TestReport | None:
        """Install dependencies; a report when that failed (the tests cannot run), else None.

        With a network, the setup reaches the registries only through its proxy; afterwards the
        container is taken off the network, and the proxy and the network are removed.
        """
        egress = held.egress
        env = {"SANDBOX_NETWORK": "1" if egress else "0",
               **(setup_network.proxy_environment(egress.proxy_url) if egress else {})}
        step = await self._step(container, argv, language.workdir, self._config.setup_timeout_s, env, judged=judged)
        if egress is not None:
            if not step.timed_out:  # a timed-out setup left a killed container: nothing to cut
                await self._call(containers.cut_network, self._client_(), container)
            held.egress = None
            await self._call(setup_network.close, self._client_(), egress)
        if step.exit_code == 0 and not step.timed_out:
            return None
        why = "timed out" if step.timed_out else f"failed (exit code {step.exit_code})"
        return TestReport(status=TestStatus.ERROR, exit_code=step.exit_code, duration_s=step.duration_s,
                          stdout=step.stdout, stderr=f"dependency setup {why}:\n{step.stderr}",
                          truncated=step.truncated)

    async def _step(self, container: Box, argv: list[str], workdir: str, limit_s: float,
                    env: dict[str, str] | None = None, output_limit: int | None = None,
                    seal: Sequence[str] = (), judged: str = "") -> StepResult:
        """Run one command in the container, killed from outside after ``limit_s``, and from inside a little
        later should this process die meanwhile (the container's deadline); the reports at ``seal``'s paths
        read by the sandbox's own user as the command writes them; the sandbox's own user runs ``judged`` first."""
        await self._arm(container, limit_s + DEADLINE_GRACE_S, seal, judged)
        client = self._client_()
        output = SplitOutput(output_limit or self._config.max_output_bytes)
        started = time.monotonic()
        exec_id, timed_out = await self._exec(container, argv, self._config.user, workdir, output, env, limit_s)
        duration = time.monotonic() - started
        # Under another runtime (gVisor) a killed command may be the whole sandbox ending, which the engine shows late.
        settle_s = containers.STATE_WAIT_S if self._config.runtime else 0.0
        code, whole = (None, False) if timed_out else await self._call(
            containers.exec_end, client, container, exec_id, settle_s)
        stdout, stderr = output.texts()
        if code == UNPACK_EXIT and UNPACK_FAILED in stderr:
            raise SandboxError(f"could not copy the files into the sandbox: {stderr[-500:]}")
        # The whole container ended at its memory limit (gVisor): the same sentence as one killed process, and
        # nothing more runs in it (``ended``).
        ended = f"{reports.memory_killed(self._config)} (the runtime ended the whole sandbox: OOMKilled)" if whole else ""
        return StepResult(code, timed_out, duration, stdout, stderr, output.truncated, ended=ended)

    async def _exec(self, container: Box, argv: list[str], user: str, workdir: str, output: SplitOutput,
                    env: dict[str, str] | None = None, limit_s: float | None = None) -> tuple[str, bool]:
        """Run ``argv`` in the container, its output read into ``output`` until it ends (killed from outside after
        ``limit_s``, if given); the exec's id, and whether the limit came first."""
        exec_id, stream = await self._call(containers.exec_stream, self._client_(), container, argv, user, workdir, env)
        reader = asyncio.ensure_future(self._call(containers.drain, stream, output))
        timed_out = False
        try:
            timed_out = await self._wait(reader, exec_id, limit_s)
            if timed_out:
                await self._call(containers.kill, container)  # SIGKILL: nothing can ignore it
                await asyncio.wait({reader}, timeout=DRAIN_GRACE_S)
        finally:
            if not reader.done():  # what was read is the output; no thread may go on waiting for more
                containers.end_stream(stream)
        return exec_id, timed_out

    async def _wait(self, reader: asyncio.Future[None], exec_id: str, limit_s: float | None) -> bool:
        """Wait for the command's output to end; True when the time limit came first."""
        deadline = time.monotonic() + limit_s if limit_s is not None else float("inf")
        while not reader.done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            await asyncio.wait({reader}, timeout=min(POLL_S, remaining))
            if not reader.done() and not await self._call(containers.exec_running, self._client_(), exec_id):
                # Done, but a process it left behind holds the output open: read a moment more, then move
                # on (the caller closes the stream).
                await asyncio.wait({reader}, timeout=LINGER_S)
                return False
        return False

    async def _stage(self, container: Box, files: Mapping[str, str], language: LanguageConfig,
                     first: str, before: str = "", as_judge: bool = False) -> list[str]:
        """Stage all but the last chunk of the files; the command that runs the shell ``before``, unpacks them
        and runs ``first``."""
        stage, unpack_then_first = staged(files, language.workdir, self._config.max_upload_bytes, first, before)
        user = self._judge_user if as_judge else self._config.user
        for argv in stage:
            code, text = await self._quiet(container, argv, user, "/")
            if code != 0:
                raise SandboxError(f"could not copy the files into the sandbox (exit {code}): {text[:500]}")
        return unpack_then_first

    async def _open_egress(self) -> setup_network.SetupNetwork:
        """The setup's internal network and its proxy, removed again if the run is cancelled meanwhile."""
        image = await self._image("python", self._language("python"))  # python3 runs the proxy
        opening = asyncio.ensure_future(self._call(_open_with_proxy, self._client_(), self._config, image))
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self._call(setup_network.close, self._client_(), await opening)
            raise

    async def _start(self, name: str, language: LanguageConfig, network: str | None) -> Box:
        image = await self._image(name, language)
        starting = asyncio.ensure_future(self._call(
            containers.start_container, self._client_(), self._config, name, language, image, network))
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            # The worker thread finishes the start anyway: remove what it made, then let the cancel through.
            with contextlib.suppress(Exception):
                await self._remove(await starting)
            raise

    async def _start_for(self, name: str) -> Box:
        await self.start()  # a container prepared before the first run connects first
        return await self._start(name, self._language(name), network=None)

    async def _listed_images(self) -> frozenset[str] | None:
        """The engine's image names and tags, in one call (None: an engine that cannot list them)."""
        return await self._call(listed_images, self._client_())

    async def _image(self, name: str, language: LanguageConfig, listed: frozenset[str] | None = None) -> str:
        """The language's image on this engine: the registry's when present, else the offline one (looked up in
        ``listed``, the engine's image list, when given)."""
        if name not in self._images:
            image = await self._call(present_image, self._client_(), language, self._config, listed)
            if image is None:
                raise missing_image(name, language, self._config)
            self._images[name] = image
        return self._images[name]

    async def _remove(self, container: Box) -> None:
        await self._call(containers.remove, container)

    def _language(self, name: str) -> LanguageConfig:
        return language_of(name, self._languages)

    def _call(self, function: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """A blocking Docker call on the sandbox's own threads, never on the event loop.

        Own threads, not asyncio's default pool: every running test holds one for its output, and a
        shared pool of (cpus + 4) threads would run out and stall the rest of the bot.
        """
        try:
            return asyncio.get_running_loop().run_in_executor(self._threads, functools.partial(function, *args))
        except RuntimeError:  # the threads are shut down: close() came while a run was under way
            raise SandboxError("the sandbox was closed while the tests were running") from None

    def _client_(self) -> docker.DockerClient:
        if self._client is None:
            raise SandboxError("the sandbox was used before it started")
        return self._client


def _for_job(language: LanguageConfig, job: TestJob) -> LanguageConfig:
    """The language's settings with a repository job's own test command and report format laid over them
    (the structured report file is read only when that command writes it)."""
    if not job.command:
        return language
    report_file = language.report_file if language.report_file and language.report_file in job.command else ""
    return dataclasses.replace(language, test_command=job.command, report_file=report_file,
                               report_format=job.report_format or "exit-code")


def _team_tests(job: TestJob, files: Mapping[str, str]) -> list[str]:
    """The team's test files among ``files``, named as the job's built-in language names its tests (its code, and
    the data its tests read and write, stay the commands' user's)."""
    described = BUILT_IN.get(job.language)
    mine = set(job.authoritative)
    return [path for path in files if path not in mine and described is not None and described.matches_test_file(path)]


def _reports(language: LanguageConfig) -> tuple[str, ...]:
    """Where the language's test command writes its structured report, if it writes one."""
    return (language.report_file,) if language.report_file else ()


def _test_command(language: LanguageConfig) -> str:
    """The configured test command; one that writes a report first waits for the channel the sandbox reads
    it through (``judge``), so no file the team's code left there is read as the report."""
    if not language.report_file:
        return language.test_command
    return judge.await_fifo(language.report_file) + language.test_command


@dataclass(eq=False)
class _Held:
    """What one run holds in Docker, released when the run ends however it ends."""

    containers: list[Box] = field(default_factory=list)
    egress: setup_network.SetupNetwork | None = None


def _open_with_proxy(client: docker.DockerClient, config: SandboxConfig, image: str) -> setup_network.SetupNetwork:
    egress = setup_network.open_network(client)
    try:
        setup_network.start_proxy(client, config, egress, image)
    except BaseException:
        setup_network.close(client, egress)
        raise
    return egress


def _needs_setup(language: LanguageConfig, files: Mapping[str, str]) -> bool:
    if not language.setup_command:
        return False
    names = {path.rsplit("/", 1)[-1] for path in files}
    return any(wanted in names for wanted in language.setup_when)
