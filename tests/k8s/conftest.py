"""The Kubernetes sandbox's tests: the real client (kubernetes-asyncio) against a loopback cluster
(``tests/fakes/kubernetes_cluster.py``) whose Pods run as real Docker containers of the sandbox image."""

from __future__ import annotations

import dataclasses

import pytest

from bot.config.sections import KubernetesConfig, SandboxConfig
from bot.sandbox.kubernetes.sandbox import KubernetesSandbox
from tests.docker_support import TEST_CONFIG
from tests.fakes.kubernetes_cluster import LoopbackCluster

NAMESPACE = "codegen-sandbox"
PYTHON_IMAGE = "codegen-chat-sandbox/base:bookworm"  # the offline python image: python3 and pytest


@pytest.fixture
async def cluster(docker_client):
    async with LoopbackCluster() as running:
        yield running


def kubernetes_config(cluster: LoopbackCluster, tmp_path, **changes) -> SandboxConfig:
    kubeconfig = cluster.kubeconfig(tmp_path / "kubeconfig")
    kubernetes = KubernetesConfig(namespace=NAMESPACE, images={"python": PYTHON_IMAGE}, kubeconfig=str(kubeconfig),
                                  pod_start_timeout_s=60.0)
    return dataclasses.replace(TEST_CONFIG, backend="kubernetes", kubernetes=kubernetes, **changes)


@pytest.fixture
async def k8s_sandbox(cluster, tmp_path):
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path)) as sandbox:
        yield sandbox
