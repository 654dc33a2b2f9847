"""`make lint` for the Helm chart: `helm lint`, then every rendered manifest against Kubernetes' schemas.

Helm itself runs through helm-python-sdk (Helm's Go SDK, bundled as a library in the wheel: no helm
binary to download; it also applies values.schema.json), and the schema check through kubernetes-validate
(the Kubernetes OpenAPI schemas in strict mode, as kubeconform does). The chart is rendered with its
defaults and with every option on, so that no template branch escapes the check. Custom resources (the
ServiceMonitor, the PodMonitor) have no schema there and are only parsed. Every pod must also meet the
Pod Security Standard "restricted" (`restricted_violations`).

    .venv/bin/python tools/check_chart.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

CHART = Path(__file__).resolve().parents[1] / "deploy" / "helm" / "sessionledger"
KUBERNETES_VERSION = "1.30.0"
EVERYTHING_ON: dict[str, Any] = {
    "image": {"digest": "sha256:" + "ab" * 32},
    "imagePullSecrets": [{"name": "registry"}],
    "ingress": {
        "enabled": True,
        "className": "nginx",
        "annotations": {"cert-manager.io/cluster-issuer": "letsencrypt"},
        "tls": [{"secretName": "tls", "hosts": ["ledger.example.com"]}],
    },
    "serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}},
    "secrets": {
        "metricsToken": {"name": "sessionledger-metrics"},
        "oidcProviders": {"name": "sessionledger-sso", "key": "providers.json"},
        "emailHostPassword": {"name": "sessionledger-smtp", "key": "password"},
        "scimToken": {"name": "", "file": "/run/secrets/ledger/scim-token"},
        "sentryDsn": {"name": "sessionledger-sentry", "key": "dsn"},
    },
    "migrations": {"databaseUrlSecret": {"name": "sessionledger-database-owner"}},
    "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ledger"}},
    "s3": {"credentialsSecret": {"name": ""}},
    "web": {"autoscaling": {"enabled": True}, "podAnnotations": {"example.com/web": "yes"}},
    "worker": {"autoscaling": {"enabled": True}},
    "extraEnv": [
        {"name": "SESSIONLEDGER_MAX_QUEUE_DEPTH", "value": "500"},
        {"name": "EMAIL_HOST_USER", "valueFrom": {"secretKeyRef": {"name": "sessionledger-smtp", "key": "user"}}},
    ],
    "extraEnvFrom": [{"secretRef": {"name": "sessionledger-extra"}}],
    "extraVolumes": [{"name": "ledger-secrets", "secret": {"secretName": "sessionledger-files"}}],
    "extraVolumeMounts": [{"name": "ledger-secrets", "mountPath": "/run/secrets/ledger", "readOnly": True}],
    "podAnnotations": {"example.com/team": "platform"},
    "podLabels": {"example.com/cost-centre": "dev-tools"},
    "priorityClassName": "business-critical",
    "networkPolicy": {
        "enabled": True,
        "webFrom": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}],
        "metricsFrom": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
        "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}],
    },
}
CUSTOM_KINDS = {"ServiceMonitor", "PodMonitor"}


def render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The chart's manifests as the install would apply them (hooks included)."""
    from helm_python import Chart

    rendered = Chart.load(CHART).render(values or {}, name="ledger", namespace="sessionledger", is_install=True)
    documents = []
    for name, text in sorted(rendered.items()):
        if not name.endswith((".yaml", ".yml")):
            continue
        documents += [doc for doc in yaml.safe_load_all(text) if doc]
    return documents


def problems() -> list[str]:
    import helm_python
    import kubernetes_validate

    found: list[str] = []
    lint = helm_python.lint(CHART, strict=True)
    for message in _lint_messages(lint):
        found.append(f"helm lint: {message}")
    for label, values in (("defaults", None), ("every option on", EVERYTHING_ON)):
        for document in render(values):
            kind = document.get("kind", "?")
            where = f"{label}: {kind}/{document.get('metadata', {}).get('name', '?')}"
            pod = pod_spec(document)
            if pod is not None:
                found += [f"{where}: {problem}" for problem in restricted_violations(pod)]
            if kind in CUSTOM_KINDS:
                continue
            try:
                kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
            except kubernetes_validate.ValidationError as exc:
                found.append(f"{where}: {exc.message} at {'/'.join(map(str, exc.path))}")
    return found


def pod_spec(document: dict[str, Any]) -> dict[str, Any] | None:
    """The pod spec a manifest makes: its own (a Pod), its template's (a workload), or none."""
    if document.get("kind") == "Pod":
        return dict(document["spec"])
    template = (document.get("spec") or {}).get("template")
    return dict(template["spec"]) if template else None


# Pod Security Standards, "restricted" profile (kubernetes.io/docs/concepts/security/pod-security-standards),
# the rules as the admission controller applies them for its latest version.
_RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret", "name"
}  # fmt: skip
_SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
_SELINUX_TYPES = {None, "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}


def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """What in this pod spec the Pod Security Standard "restricted" refuses (empty: it is admitted)."""
    found: list[str] = []
    pod_context = pod.get("securityContext") or {}
    found += [f"{field} is set" for field in ("hostNetwork", "hostPID", "hostIPC") if pod.get(field)]
    for volume in pod.get("volumes") or []:
        if kinds := sorted(set(volume) - _RESTRICTED_VOLUMES):
            found.append(f"volume {volume.get('name')} is of a kind restricted refuses: {kinds}")
    for sysctl in pod_context.get("sysctls") or []:
        if sysctl.get("name") not in _SAFE_SYSCTLS:
            found.append(f"sysctl {sysctl.get('name')} is not a safe one")
    if (pod_context.get("windowsOptions") or {}).get("hostProcess"):
        found.append("a Windows host process")
    found += _selinux_and_apparmor("pod", pod_context)
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for container in pod.get(kind) or []:
            found += _container_violations(container, pod_context)
    return found


def _container_violations(container: dict[str, Any], pod_context: dict[str, Any]) -> list[str]:
    name = f"container {container.get('name')}"
    context = container.get("securityContext") or {}
    capabilities = context.get("capabilities") or {}
    seccomp = (context.get("seccompProfile") or pod_context.get("seccompProfile") or {}).get("type")
    rules = {
        "is privileged": bool(context.get("privileged")),
        "does not set allowPrivilegeEscalation: false": context.get("allowPrivilegeEscalation") is not False,
        "does not drop ALL capabilities": "ALL" not in (capabilities.get("drop") or []),
        "adds capabilities beyond NET_BIND_SERVICE": bool(set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}),
        "does not run as non-root (runAsNonRoot)": context.get("runAsNonRoot", pod_context.get("runAsNonRoot"))
        is not True,
        "runs as user 0": context.get("runAsUser", pod_context.get("runAsUser")) == 0,
        "has no seccompProfile RuntimeDefault or Localhost": seccomp not in ("RuntimeDefault", "Localhost"),
        "sets procMount": context.get("procMount") not in (None, "Default"),
        "uses a host port": any(port.get("hostPort") for port in container.get("ports") or []),
    }
    return [f"{name} {rule}" for rule, broken in rules.items() if broken] + _selinux_and_apparmor(name, context)


def _selinux_and_apparmor(where: str, context: dict[str, Any]) -> list[str]:
    found = []
    selinux = context.get("seLinuxOptions") or {}
    if selinux.get("type") not in _SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
        found.append(f"{where} sets SELinux options restricted refuses")
    if (context.get("appArmorProfile") or {}).get("type") == "Unconfined":
        found.append(f"{where} runs unconfined by AppArmor")
    return found


def _lint_messages(result: dict[str, Any]) -> list[str]:
    """Errors and warnings of helm lint's result (Helm's severities: 1 info, e.g. "icon is recommended",
    passes; 2 warning and 3 error fail, as `helm lint --strict` does)."""
    bad = [m for m in result.get("messages") or [] if int(m.get("severity", 3)) >= 2]
    return [f"{m.get('path')}: {m.get('error')}" for m in bad] + [str(e) for e in result.get("errors") or []]


def main() -> int:
    found = problems()
    for problem in found:
        print(problem, file=sys.stderr)
    print(f"helm chart: {len(found)} problems ({CHART.relative_to(CHART.parents[2])})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
