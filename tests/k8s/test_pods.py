"""What the API server received for a test Pod: every hardening field, limits from [sandbox], labels naming the
run, and nothing of the bot's environment."""

from __future__ import annotations

import json

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.process.logs import log_context
from bot.sandbox.kubernetes.sandbox import KubernetesSandbox
from tests.k8s.conftest import NAMESPACE, kubernetes_config

pytestmark = pytest.mark.docker

PASSING = "def test_one():\n    assert 1 + 1 == 2\n"


async def test_the_pod_has_every_hardening_field(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-never-in-a-pod")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_never_in_a_pod")
    config = kubernetes_config(cluster, tmp_path, memory_mb=300, cpus=0.5)
    async with KubernetesSandbox(config) as sandbox:
        with log_context(run_id="a1b2c3d4"):
            report = await sandbox.run(TestJob("python", FileSet({"test_one.py": PASSING})))
    assert report.status is TestStatus.PASSED, report.stderr
    [pod] = cluster.created
    spec = pod["spec"]
    assert pod["metadata"]["namespace"] == NAMESPACE
    assert pod["metadata"]["labels"]["codegen-chat.sandbox"] == "1"
    assert pod["metadata"]["labels"]["codegen-chat.run"] == "a1b2c3d4"
    assert spec["automountServiceAccountToken"] is False
    assert spec["restartPolicy"] == "Never"
    assert spec["activeDeadlineSeconds"] >= config.timeout_s
    assert spec["enableServiceLinks"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert "runtimeClassName" not in spec
    containers = spec["initContainers"] + spec["containers"]
    assert {c["name"] for c in containers} == {"prepare", "judge", "tests"}
    for container in containers:
        context = container["securityContext"]
        assert context["runAsNonRoot"] is True and context["runAsUser"] != 0
        assert context["readOnlyRootFilesystem"] is True
        assert context["allowPrivilegeEscalation"] is False
        assert context["privileged"] is False
        assert context["capabilities"] == {"drop": ["ALL"]}
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
        assert container["resources"]["requests"] == container["resources"]["limits"]
    tests = next(c for c in spec["containers"] if c["name"] == "tests")
    assert tests["resources"]["limits"]["memory"] == "300Mi"
    assert tests["resources"]["limits"]["cpu"] == "500m"
    assert tests["securityContext"]["runAsUser"] == 65534
    assert {m["mountPath"] for m in tests["volumeMounts"]} == {"/work", "/tmp"}
    assert [v for v in spec["volumes"] if "emptyDir" in v], "the work dir is an emptyDir"
    assert all(set(v) == {"name", "emptyDir"} for v in spec["volumes"]), "no host path, no secret, no config map"
    text = json.dumps(pod)
    assert "sk-test-secret" not in text and "ghp_never" not in text
    assert {e["name"] for c in containers for e in c.get("env", [])} <= {"HOME", "LANG", "TMPDIR", "PYTHONPATH",
                                                                        "PYTHONDONTWRITEBYTECODE"}


async def test_a_runtime_class_is_asked_for_when_configured(cluster, tmp_path):
    import dataclasses

    config = kubernetes_config(cluster, tmp_path)
    config = dataclasses.replace(config, kubernetes=dataclasses.replace(config.kubernetes, runtime_class="gvisor"))
    from bot.sandbox.kubernetes.pods import pod_manifest
    from bot.sandbox.languages import languages

    manifest = pod_manifest(config, "p", "python", languages(config)["python"], "image")
    assert manifest["spec"]["runtimeClassName"] == "gvisor"


def test_a_named_user_is_refused_for_pods():
    from agents.errors import SandboxError
    from bot.sandbox.kubernetes.pods import numeric_user

    with pytest.raises(SandboxError, match="numeric"):
        numeric_user("nobody")
    with pytest.raises(SandboxError, match="root"):
        numeric_user("0:0")
    assert numeric_user("65534:65534") == (65534, 65534)
