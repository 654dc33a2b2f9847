"""A new web worker loads what Django and the pages load on first use before it takes a request
(config/warmup.py, gunicorn's ``post_worker_init``): its first reader does not wait for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

# gunicorn calls the hook in a worker whose app (config.wsgi) is loaded; what is then loaded is printed
_START_A_WORKER = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
import config.wsgi
from django.template import engines
from config import gunicorn
{before}
gunicorn.post_worker_init(None)
env = engines["jinja2"].env
compiled = {{key[1] for key in env.cache.keys()}} if env.cache is not None else set()
print(json.dumps({{
    "views": sorted(name for name in sys.modules if name.startswith("frontend.views.")),
    "templates_left": sorted(set(env.list_templates()) - compiled),
}}))
"""


def _start_a_worker(before: str = "") -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    return subprocess.run(
        [sys.executable, "-c", _START_A_WORKER.format(before=before)],
        cwd=BASE_DIR,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_new_worker_has_loaded_every_view_and_template_before_its_first_request() -> None:
    result = _start_a_worker()

    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert "frontend.views.sessions" in loaded["views"] and "frontend.views.conversation_page" in loaded["views"]
    assert loaded["templates_left"] == []
    assert "worker ready:" in result.stderr


def test_a_warmer_that_fails_is_logged_and_the_worker_still_starts() -> None:
    failing = (
        "from config.warmup import worker_starting\n"
        "def broken(**_): raise RuntimeError('lexers unavailable')\n"
        "worker_starting.connect(broken, weak=False)"
    )

    result = _start_a_worker(failing)

    assert result.returncode == 0, result.stderr
    assert "worker warm-up skipped broken: RuntimeError('lexers unavailable')" in result.stderr
    assert json.loads(result.stdout)["templates_left"] == []  # the other warmers ran
