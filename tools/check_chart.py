"""`make lint` for the Helm chart: `helm lint`, then every rendered manifest against Kubernetes' schemas.

Helm itself runs through helm-python-sdk (Helm's Go SDK, bundled as a library in the wheel: no helm
binary to download), and the schema check through kubernetes-validate (the Kubernetes OpenAPI schemas
in strict mode, as kubeconform does). The chart is rendered with its defaults and with every option
on, so that no template branch escapes the check. Custom resources (the ServiceMonitor) have no
schema there and are only parsed.

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
    "ingress": {"enabled": True, "className": "nginx", "tls": [{"secretName": "tls", "hosts": ["ledger.example.com"]}]},
    "serviceMonitor": {"enabled": True},
    "secrets": {"metricsToken": {"name": "sessionledger-metrics"}},
    "web": {"autoscaling": {"enabled": True}},
    "worker": {"autoscaling": {"enabled": True}},
    "extraEnv": {"SESSIONLEDGER_MAX_QUEUE_DEPTH": "500"},
}
CUSTOM_KINDS = {"ServiceMonitor"}


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
            if kind in CUSTOM_KINDS:
                continue
            try:
                kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
            except kubernetes_validate.ValidationError as exc:
                found.append(f"{where}: {exc.message} at {'/'.join(map(str, exc.path))}")
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
