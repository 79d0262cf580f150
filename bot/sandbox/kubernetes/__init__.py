"""Tests in Kubernetes Pods: ``[sandbox] backend = "kubernetes"`` (docs/kubernetes.md).

    pods        the Pod a job runs in: locked down, labelled for its run (pure functions of the config)
    api         the cluster's clients from a kubeconfig or the service account, and its refusals as sentences
    execs       one command in a Pod's container over the ``v4.channel.k8s.io`` websocket (``pods/exec``)
    sweep       deletes the Pods of runs that are not running, and finished ones
    sandbox     ``KubernetesSandbox``: the Docker sandbox's steps, each in a Pod instead of a container

The client library (kubernetes-asyncio) is the ``kubernetes`` extra: nothing here is imported unless the backend
is chosen.
"""
