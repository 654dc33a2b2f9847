"""The Helm chart (deploy/helm/sessionledger): `helm lint`, Kubernetes' schemas, and what operators rely on:
one beat, migrations before the pods, probes split into liveness and readiness, secrets never inline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import check_chart


@pytest.fixture(scope="module")
def manifests() -> dict[str, dict[str, Any]]:
    return {f"{doc['kind']}/{doc['metadata']['name']}": doc for doc in check_chart.render(check_chart.EVERYTHING_ON)}


def _container(manifests: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
    [container] = manifests[key]["spec"]["template"]["spec"]["containers"]
    return container


def test_the_chart_lints_and_every_manifest_passes_the_kubernetes_schemas() -> None:
    assert check_chart.problems() == []


def test_the_schema_check_catches_a_malformed_manifest() -> None:
    documents = check_chart.render({"podSecurityContext": {"runAsUser": "root"}})
    [web] = [d for d in documents if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-web")]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(web, check_chart.KUBERNETES_VERSION, strict=True)


def test_beat_is_exactly_one_pod_replaced_by_recreate(manifests) -> None:
    beat = manifests["Deployment/ledger-sessionledger-beat"]["spec"]
    assert beat["replicas"] == 1 and beat["strategy"] == {"type": "Recreate"}
    assert "HorizontalPodAutoscaler/ledger-sessionledger-beat" not in manifests


def test_migrations_run_as_a_hook_before_install_and_upgrade(manifests) -> None:
    job = manifests["Job/ledger-sessionledger-migrate"]
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert _container(manifests, "Job/ledger-sessionledger-migrate")["command"] == [
        "python",
        "manage.py",
        "migrate",
        "--no-input",
    ]


def test_web_liveness_asks_livez_and_readiness_asks_readyz_with_an_allowed_host(manifests) -> None:
    web = _container(manifests, "Deployment/ledger-sessionledger-web")
    assert web["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
    environment = {item["name"]: item.get("value") for item in web["env"]}
    host, pod = environment["ALLOWED_HOSTS"].split(",")
    assert host == "ledger.example.com" and pod == "$(POD_IP)"  # Prometheus scrapes by pod IP
    assert web["readinessProbe"]["httpGet"]["httpHeaders"] == [{"name": "Host", "value": host}]


def test_credentials_come_only_from_existing_secrets(manifests) -> None:
    for key in (
        "Deployment/ledger-sessionledger-web",
        "Deployment/ledger-sessionledger-worker",
        "Job/ledger-sessionledger-migrate",
    ):
        env = {item["name"]: item for item in _container(manifests, key)["env"]}
        for name in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "S3_SECRET_ACCESS_KEY", "SESSIONLEDGER_METRICS_TOKEN"):
            assert "value" not in env[name] and env[name]["valueFrom"]["secretKeyRef"]["name"], (key, name)
    assert not [doc for doc in manifests.values() if doc["kind"] == "Secret"]


def test_web_and_worker_scale_and_keep_a_pod_through_disruptions(manifests) -> None:
    for component in ("web", "worker"):
        assert manifests[f"HorizontalPodAutoscaler/ledger-sessionledger-{component}"]["spec"]["maxReplicas"] > 1
        assert manifests[f"PodDisruptionBudget/ledger-sessionledger-{component}"]["spec"]["minAvailable"] == 1
        assert "replicas" not in manifests[f"Deployment/ledger-sessionledger-{component}"]["spec"]  # the HPA's


def test_optional_ingress_and_service_monitor_are_off_by_default() -> None:
    kinds = {doc["kind"] for doc in check_chart.render()}
    assert {"Deployment", "Service", "Job", "PodDisruptionBudget"} <= kinds
    assert not kinds & {"Ingress", "ServiceMonitor", "HorizontalPodAutoscaler"}
