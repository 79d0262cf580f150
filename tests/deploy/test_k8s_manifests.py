"""deploy/k8s/: every manifest is valid against the Kubernetes API's own schemas (kubernetes-validate, offline), and
the policy pack keeps its promises: restricted Pod Security, default-deny networking, a quota, least privilege, and
a test Pod of the bot's own that all of them admit."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from bot.config.sections import Config, SandboxConfig, load_config
from bot.sandbox.kubernetes.pods import pod_manifest
from bot.sandbox.languages import languages

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
FILES = sorted(path for path in K8S.glob("*.yaml") if path.name != "kustomization.yaml")
DOCUMENTS = [(path.name, doc) for path in FILES for doc in yaml.safe_load_all(path.read_text()) if doc]
VERSIONS = ["1.29", kubernetes_validate.latest_version()]  # the oldest we document, and the newest schemas
SANDBOX_NS = "codegen-sandbox"


def kind(name: str) -> list[dict]:
    return [doc for _, doc in DOCUMENTS if doc["kind"] == name]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("where,document", DOCUMENTS, ids=[f"{n}:{d['kind']}" for n, d in DOCUMENTS])
def test_every_manifest_is_valid(where, document, version):
    kubernetes_validate.validate(document, version, strict=True)  # raises, naming the field, when not


@pytest.mark.parametrize("version", VERSIONS)
def test_the_bots_own_test_pod_is_valid(version):
    config = SandboxConfig()
    manifest = pod_manifest(config, "codegen-sandbox-python-0123456789", "python", languages(config)["python"],
                            "registry.example/codegen-chat-sandbox/base:bookworm", "a1b2c3d4")
    kubernetes_validate.validate(manifest, version, strict=True)


def test_kustomization_applies_every_required_manifest():
    listed = yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in FILES if p.name != "runtimeclass-gvisor.yaml")


def test_both_namespaces_enforce_the_restricted_pod_security_standard():
    namespaces = {doc["metadata"]["name"]: doc["metadata"]["labels"] for doc in kind("Namespace")}
    assert set(namespaces) == {SANDBOX_NS, "codegen-chat"}
    for labels in namespaces.values():
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_test_pods_get_no_network_at_all():
    [policy] = kind("NetworkPolicy")
    assert policy["metadata"]["namespace"] == SANDBOX_NS
    assert policy["spec"]["podSelector"] == {}  # every Pod of the namespace
    assert sorted(policy["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    assert "ingress" not in policy["spec"] and "egress" not in policy["spec"]  # no rule: nothing allowed


def test_the_quota_bounds_what_test_pods_hold_and_fits_the_default_pod():
    [quota] = kind("ResourceQuota")
    hard = quota["spec"]["hard"]
    for key in ("pods", "requests.cpu", "limits.cpu", "requests.memory", "limits.memory"):
        assert key in hard
    spec = pod_manifest(SandboxConfig(), "p", "python", languages(SandboxConfig())["python"], "i")["spec"]
    memory = sum(int(c["resources"]["limits"]["memory"].removesuffix("Mi")) for c in spec["containers"])
    assert memory * int(hard["pods"]) <= int(hard["limits.memory"].removesuffix("Mi"))
    [limits] = kind("LimitRange")
    assert limits["metadata"]["namespace"] == SANDBOX_NS


def test_the_bot_may_do_only_what_the_sandbox_needs_in_its_namespace_only():
    assert not kind("ClusterRole") and not kind("ClusterRoleBinding")
    [role] = kind("Role")
    assert role["metadata"]["namespace"] == SANDBOX_NS
    rules = {resource: sorted(rule["verbs"]) for rule in role["rules"] for resource in rule["resources"]}
    assert rules == {"pods": ["create", "delete", "get", "list"], "pods/exec": ["create", "get"],
                     "pods/log": ["get"]}
    assert all(rule["apiGroups"] == [""] for rule in role["rules"])
    [binding] = kind("RoleBinding")
    assert binding["metadata"]["namespace"] == SANDBOX_NS
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "codegen-chat", "namespace": "codegen-chat"}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]


def test_the_bot_itself_runs_restricted_under_its_service_account():
    [deployment] = kind("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "codegen-chat"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    [bot] = pod["containers"]
    context = bot["securityContext"]
    assert context["allowPrivilegeEscalation"] is False and context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert bot["resources"]["requests"] == bot["resources"]["limits"]
    assert all("value" not in e or "KEY" not in e["name"] for e in bot.get("env", [])), "secrets only from a Secret"


def test_the_configmaps_settings_are_a_valid_config_for_the_kubernetes_backend(tmp_path):
    [configmap] = kind("ConfigMap")
    path = tmp_path / "config.toml"
    path.write_text(configmap["data"]["config.toml"])
    config: Config = load_config(path)
    assert config.sandbox.backend == "kubernetes"
    assert config.sandbox.kubernetes.namespace == SANDBOX_NS
    assert set(config.sandbox.kubernetes.images) == set(languages(config.sandbox))
    assert tomllib.loads(configmap["data"]["config.toml"])  # plain TOML, as the image reads it


def test_a_gvisor_runtime_class_is_offered():
    [runtime] = kind("RuntimeClass")
    assert runtime["handler"] == "runsc"
    config = dataclasses.replace(SandboxConfig(), kubernetes=dataclasses.replace(
        SandboxConfig().kubernetes, runtime_class=runtime["metadata"]["name"]))
    spec = pod_manifest(config, "p", "python", languages(config)["python"], "i")["spec"]
    assert spec["runtimeClassName"] == "gvisor"
