"""The Helm chart (deploy/helm/sessionledger): `helm lint`, Kubernetes' schemas, and what operators rely on:
one beat, migrations before the pods, probes split into liveness and readiness, secrets never inline,
every pod admitted under the Pod Security Standard "restricted", each value rendered where it belongs.
(The install on a real cluster is tools/chart_install_test.sh: docs/deployment.md "Install test".)"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import chart_readme
import check_chart

NAME = "ledger-sessionledger"
WORKLOADS = (f"Deployment/{NAME}-web", f"Deployment/{NAME}-worker", f"StatefulSet/{NAME}-beat", f"Job/{NAME}-migrate")


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


def test_beat_is_a_stateful_set_of_one_so_a_partition_never_starts_a_second(manifests) -> None:
    beat = manifests[f"StatefulSet/{NAME}-beat"]["spec"]
    assert beat["replicas"] == 1 and beat["serviceName"] == f"{NAME}-beat"
    assert manifests[f"Service/{NAME}-beat"]["spec"]["clusterIP"] == "None"
    assert f"Deployment/{NAME}-beat" not in manifests and f"HorizontalPodAutoscaler/{NAME}-beat" not in manifests


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


# (values path, variable): every credential the app reads
CREDENTIALS = (
    (("secrets", "secretKey"), "SECRET_KEY"),
    (("secrets", "metricsToken"), "SESSIONLEDGER_METRICS_TOKEN"),
    (("secrets", "oidcProviders"), "SESSIONLEDGER_OIDC_PROVIDERS"),
    (("secrets", "emailHostPassword"), "EMAIL_HOST_PASSWORD"),
    (("secrets", "scimToken"), "SESSIONLEDGER_SCIM_TOKEN"),
    (("secrets", "sentryDsn"), "SENTRY_DSN"),
    (("postgresql", "urlSecret"), "DATABASE_URL"),
    (("redis", "urlSecret"), "REDIS_URL"),
)


def _env(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    [container] = document["spec"]["template"]["spec"]["containers"]
    return {item["name"]: item for item in container["env"]}


def _by_key(values: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    return {f"{doc['kind']}/{doc['metadata']['name']}": doc for doc in check_chart.render(values)}


@pytest.mark.parametrize(("path", "variable"), CREDENTIALS, ids=[v for _, v in CREDENTIALS])
def test_every_credential_comes_from_an_existing_secret_or_a_mounted_file(path, variable) -> None:
    section, key = path
    from_secret = _by_key({section: {key: {"name": "creds", "key": "the-key", "file": ""}}})
    from_file = _by_key({section: {key: {"name": "", "file": "/run/secrets/ledger/x"}}})
    for workload in WORKLOADS:
        assert _env(from_secret[workload])[variable]["valueFrom"] == {
            "secretKeyRef": {"name": "creds", "key": "the-key"}
        }, workload
        env = _env(from_file[workload])
        assert env[f"{variable}_FILE"]["value"] == "/run/secrets/ledger/x" and variable not in env  # config/env.py
    assert not [doc for doc in from_secret.values() if doc["kind"] == "Secret"]


def test_s3_keys_come_from_a_secret_or_files_or_not_at_all_for_the_pods_cloud_identity() -> None:
    keys = ("S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY")
    from_secret = _env(_by_key()[f"Deployment/{NAME}-web"])
    assert [from_secret[k]["valueFrom"]["secretKeyRef"]["name"] for k in keys] == ["sessionledger-s3"] * 2
    files = {"name": "", "accessKeyIdFile": "/run/s3/id", "secretAccessKeyFile": "/run/s3/secret"}
    from_files = _env(_by_key({"s3": {"credentialsSecret": files}})[f"Deployment/{NAME}-web"])
    assert [from_files[f"{k}_FILE"]["value"] for k in keys] == ["/run/s3/id", "/run/s3/secret"]
    identity = _env(_by_key({"s3": {"credentialsSecret": {"name": ""}}})[f"Deployment/{NAME}-web"])
    assert not [name for name in identity if name.startswith("S3_ACCESS") or name.startswith("S3_SECRET")]


def test_extra_env_takes_value_from_and_env_from_and_volumes_reach_every_container(manifests) -> None:
    for workload in WORKLOADS:
        [container] = manifests[workload]["spec"]["template"]["spec"]["containers"]
        env = _env(manifests[workload])
        assert env["EMAIL_HOST_USER"]["valueFrom"]["secretKeyRef"] == {"name": "sessionledger-smtp", "key": "user"}
        assert container["envFrom"] == [{"secretRef": {"name": "sessionledger-extra"}}]
        assert {"name": "ledger-secrets", "mountPath": "/run/secrets/ledger", "readOnly": True} in container[
            "volumeMounts"
        ]
        volumes = manifests[workload]["spec"]["template"]["spec"]["volumes"]
        assert {"name": "ledger-secrets", "secret": {"secretName": "sessionledger-files"}} in volumes


def test_extra_env_given_last_overrides_the_charts_own_and_the_old_map_form_still_renders() -> None:
    listed = check_chart.render({"extraEnv": [{"name": "LOG_LEVEL", "value": "DEBUG"}]})
    [web] = [d for d in listed if d["metadata"]["name"] == f"{NAME}-web" and d["kind"] == "Deployment"]
    [container] = web["spec"]["template"]["spec"]["containers"]
    assert [e.get("value") for e in container["env"] if e["name"] == "LOG_LEVEL"][-1] == "DEBUG"  # the last wins
    mapped = _env(_by_key({"extraEnv": {"SESSIONLEDGER_MAX_QUEUE_DEPTH": 500}})[f"Deployment/{NAME}-web"])
    assert mapped["SESSIONLEDGER_MAX_QUEUE_DEPTH"]["value"] == "500"


def test_the_migration_job_alone_holds_the_schema_owners_url(manifests) -> None:
    """migrate logs in as the owner and grants the runtime login (governance/dbroles.py), so the Job needs both."""
    job = _env(manifests[f"Job/{NAME}-migrate"])
    assert job["DATABASE_OWNER_URL"]["valueFrom"]["secretKeyRef"]["name"] == "sessionledger-database-owner"
    assert job["DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == "sessionledger-database"
    for workload in WORKLOADS[:3]:
        assert _env(manifests[workload])["DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == (
            "sessionledger-database"
        )
    assert "sessionledger-database-owner" not in str(manifests[f"Pod/{NAME}-test"])


def test_pods_run_as_an_annotated_service_account_without_its_api_token(manifests) -> None:
    account = manifests[f"ServiceAccount/{NAME}"]
    assert account["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ledger"}
    assert account["automountServiceAccountToken"] is False
    for workload in (*WORKLOADS[:3], f"Pod/{NAME}-test"):
        document = manifests[workload]
        pod = document["spec"] if document["kind"] == "Pod" else document["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == NAME and pod["automountServiceAccountToken"] is False
    # A pre-install hook runs before the chart's account exists: the Job uses the namespace's default.
    job = manifests[f"Job/{NAME}-migrate"]["spec"]["template"]["spec"]
    assert "serviceAccountName" not in job and job["automountServiceAccountToken"] is False
    existing = _by_key({"serviceAccount": {"create": False, "name": "platform-ledger"}})
    assert f"ServiceAccount/{NAME}" not in existing
    assert existing[f"Deployment/{NAME}-web"]["spec"]["template"]["spec"]["serviceAccountName"] == "platform-ledger"


@pytest.mark.parametrize("label", ["defaults", "every option on", "install test"])
def test_every_pod_is_admitted_under_the_restricted_pod_security_standard(label) -> None:
    values = {"defaults": None, "every option on": check_chart.EVERYTHING_ON, "install test": _install_values()}
    pods = [check_chart.pod_spec(doc) for doc in check_chart.render(values[label])]
    pods = [pod for pod in pods if pod is not None]
    assert len(pods) == 5  # web, worker, beat, the migration Job, the helm test
    for pod in pods:
        assert check_chart.restricted_violations(pod) == []


def _install_values() -> dict[str, Any]:
    return yaml.safe_load((check_chart.CHART / "ci" / "install-values.yaml").read_text())


def test_the_restricted_check_catches_what_the_profile_refuses() -> None:
    loose = check_chart.render(
        {
            "podSecurityContext": {"runAsNonRoot": False},
            "securityContext": {
                "allowPrivilegeEscalation": True,
                "runAsNonRoot": False,
                "capabilities": {"add": ["NET_ADMIN"]},
            },
            "extraVolumes": [{"name": "host", "hostPath": {"path": "/var/run"}}],
        }
    )
    problems = check_chart.restricted_violations(check_chart.pod_spec(loose[-1]) or {})
    assert any("allowPrivilegeEscalation" in p for p in problems)
    assert any("NET_ADMIN" in p or "beyond NET_BIND_SERVICE" in p for p in problems)
    assert any("runAsNonRoot" in p for p in problems) and any("hostPath" in p for p in problems)
    assert any("seccompProfile" in p for p in check_chart.restricted_violations({"containers": [{"name": "x"}]}))


def test_the_root_filesystem_is_read_only_and_only_tmp_is_writable(manifests) -> None:
    for workload in WORKLOADS:
        spec = manifests[workload]["spec"]["template"]["spec"]
        [container] = spec["containers"]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in spec["volumes"]}
        assert "emptyDir" in volumes[mounts["/tmp"]] and "emptyDir" in volumes[mounts["/tmp/prometheus"]]
    beat = _container(manifests, f"StatefulSet/{NAME}-beat")["command"]
    assert beat[beat.index("--schedule") + 1].startswith("/tmp/")


def test_a_rollout_lets_in_flight_requests_finish(manifests) -> None:
    spec = manifests[f"Deployment/{NAME}-web"]["spec"]["template"]["spec"]
    [web] = spec["containers"]
    assert web["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", "10"]
    graceful = int(web["command"][web["command"].index("--graceful-timeout") + 1])
    assert graceful == 300 and spec["terminationGracePeriodSeconds"] >= 10 + graceful
    assert web["command"][web["command"].index("--config") + 1] == "python:config.gunicorn"
    worker = manifests[f"Deployment/{NAME}-worker"]["spec"]["template"]["spec"]
    assert worker["terminationGracePeriodSeconds"] > 180  # SESSIONLEDGER_PROCESS_TIME_LIMIT's default
    with pytest.raises(Exception, match="terminationGracePeriodSeconds must cover"):
        check_chart.render({"web": {"terminationGracePeriodSeconds": 60}})


def test_the_ingress_passes_uploads_and_long_exports_and_the_app_counts_its_proxy(manifests) -> None:
    annotations = manifests[f"Ingress/{NAME}"]["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-body-size"] == "16m"
    assert annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] == "600"
    assert annotations["cert-manager.io/cluster-issuer"] == "letsencrypt"
    assert _env(manifests[f"Deployment/{NAME}-web"])["SESSIONLEDGER_PROXY_COUNT"]["value"] == "1"
    assert _env(_by_key()[f"Deployment/{NAME}-web"])["SESSIONLEDGER_PROXY_COUNT"]["value"] == "0"
    two = _by_key({"ingress": {"enabled": True}, "proxyCount": 2})
    assert _env(two[f"Deployment/{NAME}-web"])["SESSIONLEDGER_PROXY_COUNT"]["value"] == "2"


def test_pod_metadata_priority_and_spread_reach_the_pods(manifests) -> None:
    for workload in WORKLOADS:
        template = manifests[workload]["spec"]["template"]
        assert template["metadata"]["labels"]["example.com/cost-centre"] == "dev-tools"
        assert template["metadata"]["annotations"]["example.com/team"] == "platform"
        assert template["spec"]["priorityClassName"] == "business-critical"
    web = manifests[f"Deployment/{NAME}-web"]["spec"]["template"]
    assert web["metadata"]["annotations"]["example.com/web"] == "yes"
    [spread] = web["spec"]["topologySpreadConstraints"]
    assert spread["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "web"
    assert spread["topologyKey"] == "kubernetes.io/hostname"


def test_network_policies_open_only_the_http_and_metrics_ports(manifests) -> None:
    web = manifests[f"NetworkPolicy/{NAME}-web"]["spec"]
    [rule] = web["ingress"]
    assert rule["ports"] == [{"port": "http", "protocol": "TCP"}] and len(rule["from"]) == 2
    [worker_rule] = manifests[f"NetworkPolicy/{NAME}-worker"]["spec"]["ingress"]
    assert worker_rule["ports"] == [{"port": "metrics", "protocol": "TCP"}]
    for component in ("beat", "migrate"):
        assert manifests[f"NetworkPolicy/{NAME}-{component}"]["spec"]["ingress"] == []
    assert web["policyTypes"] == ["Ingress", "Egress"]
    assert not [d for d in check_chart.render() if d["kind"] == "NetworkPolicy"]


def test_the_workers_metrics_are_scraped_with_the_token(manifests) -> None:
    monitor = manifests[f"PodMonitor/{NAME}-worker"]["spec"]
    assert monitor["selector"]["matchLabels"]["app.kubernetes.io/component"] == "worker"
    [endpoint] = monitor["podMetricsEndpoints"]
    assert endpoint["port"] == "metrics" and endpoint["bearerTokenSecret"]["name"] == "sessionledger-metrics"
    ports = _container(manifests, f"Deployment/{NAME}-worker")["ports"]
    assert ports == [{"name": "metrics", "containerPort": 9808, "protocol": "TCP"}]


def test_an_image_digest_pins_every_pod_to_it(manifests) -> None:
    for workload in WORKLOADS:
        assert _container(manifests, workload)["image"] == "ghcr.io/sessionledger/sessionledger@sha256:" + "ab" * 32
    assert _container(_by_key(), f"Deployment/{NAME}-web")["image"] == "ghcr.io/sessionledger/sessionledger:0.1.0"


def test_helm_test_asks_the_service_for_the_sign_in_page(manifests) -> None:
    pod = manifests[f"Pod/{NAME}-test"]
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    [container] = pod["spec"]["containers"]
    assert "/accounts/login/" in container["command"][2]
    assert container["command"][3:] == [f"http://{NAME}:80", "ledger.example.com"]


@pytest.mark.parametrize(
    "values",
    [
        {"siteUrl": "ledger.example.com"},
        {"secrets": {"secretKey": {"name": ""}}},
        {"postgresql": {"urlSecret": {"name": "", "file": ""}}},
        {"image": {"digest": "latest"}},
        {"web": {"workers": 0}},
        {"proxyCount": -1},
        {"extraEnv": [{"value": "no name"}]},
        {"ingres": {"enabled": True}},
        {"serviceAccount": {"anotations": {}}},
        {"logLevel": "verbose"},
    ],
    ids=lambda values: str(values)[:40],
)
def test_the_values_schema_refuses_a_malformed_value_before_rendering(values) -> None:
    with pytest.raises(Exception, match="schema"):
        check_chart.render(values)


def test_the_chart_readme_lists_every_value_as_values_yaml_says() -> None:
    text = (check_chart.CHART / "values.yaml").read_text()
    assert chart_readme.README.read_text() == chart_readme.render(text), "run tools/chart_readme.py"
    documented = {row.key for row in chart_readme.rows(text)}
    assert {"secrets.oidcProviders", "serviceAccount.annotations", "image.digest", "proxyCount"} <= documented


def test_web_and_worker_scale_and_keep_a_pod_through_disruptions(manifests) -> None:
    for component in ("web", "worker"):
        assert manifests[f"HorizontalPodAutoscaler/ledger-sessionledger-{component}"]["spec"]["maxReplicas"] > 1
        assert manifests[f"PodDisruptionBudget/ledger-sessionledger-{component}"]["spec"]["minAvailable"] == 1
        assert "replicas" not in manifests[f"Deployment/ledger-sessionledger-{component}"]["spec"]  # the HPA's


def test_optional_ingress_and_service_monitor_are_off_by_default() -> None:
    kinds = {doc["kind"] for doc in check_chart.render()}
    assert {"Deployment", "Service", "Job", "PodDisruptionBudget"} <= kinds
    assert not kinds & {"Ingress", "ServiceMonitor", "HorizontalPodAutoscaler"}
