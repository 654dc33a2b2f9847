"""``POST /integrations/{github,gitlab}/webhook``: verify, de-duplicate, apply (docs/forges.md).

Refusals say as little as possible: a wrong signature is 401 whatever else is wrong; a replayed
delivery is 200 (the forge stops retrying) and changes nothing."""

from __future__ import annotations

import logging
from functools import partial

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from integrations.forges import ADAPTERS
from integrations.forges.base import BadPayload
from integrations.services import delivery_record, event_apply
from integrations.tasks import enqueue_commits_sync

logger = logging.getLogger(__name__)


def _receive(request: HttpRequest, forge: str) -> HttpResponse:
    adapter = ADAPTERS[forge]
    body = request.body  # Django refuses bodies over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) with 400
    if not adapter.verify(request.headers, body):
        return JsonResponse({"detail": "bad signature"}, status=401)
    delivery = adapter.delivery_id(request.headers)[:100]
    if not delivery:
        return JsonResponse({"detail": "no delivery id"}, status=400)
    try:
        event = adapter.parse(request.headers, body)
    except BadPayload as exc:
        logger.warning("%s delivery %s refused: %s", forge, delivery, exc)
        return JsonResponse({"detail": "unexpected payload"}, status=400)
    with transaction.atomic():
        # The delivery and its effects commit together: a failure lets the forge's redelivery through.
        if not delivery_record(forge=forge, delivery_id=delivery, event=type(event).__name__):
            return JsonResponse({"detail": "already received"}, status=200)
        prs = event_apply(forge, event) if event is not None else []
        for pr in prs:
            transaction.on_commit(partial(enqueue_commits_sync, pr.pk))
    return JsonResponse({"detail": "ok"}, status=202 if prs else 200)


@csrf_exempt
@require_POST
def github_webhook(request: HttpRequest) -> HttpResponse:
    return _receive(request, "github")


@csrf_exempt
@require_POST
def gitlab_webhook(request: HttpRequest) -> HttpResponse:
    return _receive(request, "gitlab")
