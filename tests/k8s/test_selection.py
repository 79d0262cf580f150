"""``[sandbox] backend = "kubernetes"`` is what the bot builds, and the sweep asks the store which runs run."""

from __future__ import annotations

import pytest

from agents.events import RunFinished
from agents.types import FileSet, RunStatus, TestJob, TestStatus
from bot.config.sections import Config
from bot.store.sqlite import SQLiteStore
from codegen_chat.build import build_sandbox, run_is_running
from tests.k8s.conftest import NAMESPACE, kubernetes_config


@pytest.mark.docker
async def test_the_kubernetes_backend_is_what_the_config_selects(cluster, tmp_path):
    sandbox = build_sandbox(Config(sandbox=kubernetes_config(cluster, tmp_path)))
    try:
        await sandbox.ready()  # type: ignore[attr-defined]
        report = await sandbox.run(TestJob("python", FileSet({"test_one.py": "def test_one():\n    assert 2 > 1\n"})))
    finally:
        await sandbox.close()  # type: ignore[attr-defined]
    assert report.status is TestStatus.PASSED, report.stderr
    assert [pod["metadata"]["namespace"] for pod in cluster.created] == [NAMESPACE]


async def test_the_sweep_asks_the_store_which_runs_are_running(tmp_path):
    store = await SQLiteStore.open(tmp_path / "runs.sqlite3")
    try:
        conversation = await store.conversation("web", "thread-1")
        await store.create_run("aaaa0001", conversation, "task", "ann", [])
        await store.create_run("bbbb0002", conversation, "task", "ann", [])
        await store.record(RunFinished("bbbb0002", status=RunStatus.PASSED, reason="tests passed"))
        running = run_is_running(store)
        assert await running("aaaa0001") is True
        assert await running("bbbb0002") is False
        assert await running("cccc0003") is False  # never heard of: nobody needs its Pods
    finally:
        await store.close()


async def test_doctor_checks_the_cluster_and_the_namespace(tmp_path):
    from bot.config.sections import Secrets
    from bot.sandbox.doctor import sandbox_checks
    from tests.fakes.kubernetes_cluster import LoopbackCluster

    async with LoopbackCluster() as cluster:  # no Docker needed: nothing runs in a Pod here
        config = Config(sandbox=kubernetes_config(cluster, tmp_path))
        [check] = await sandbox_checks(config, Secrets())
        assert check.ok and NAMESPACE in check.detail
    [check] = await sandbox_checks(config, Secrets())  # the same cluster, gone
    assert not check.ok and check.name == "kubernetes"


@pytest.mark.docker
async def test_sandbox_run_tests_a_folder_in_a_pod(cluster, tmp_path, capsys):
    import json

    from tests.sandbox.test_commands import invoke

    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "test_one.py").write_text("def test_one():\n    assert 3 * 3 == 9\n")
    code = await invoke(Config(sandbox=kubernetes_config(cluster, tmp_path)), "sandbox", "run", "--language",
                        "python", str(folder), "--json")
    result = json.loads(capsys.readouterr().out)
    assert (code, result["status"], result["passed"]) == (0, "passed", 1)
    assert len(cluster.created) == 1
