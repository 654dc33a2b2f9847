"""The browser half of device login: the user types the code their terminal shows, sees who asks
(as unverified claims, with where and when the request started) and approves or denies.

A link never approves anything: ``/device?code=…`` only shows the empty form, so a phishing
message cannot turn into a one-click grant. Every POST is a code attempt, budgeted per user and per
address (projects/device.py).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from projects import device, limits
from projects.errors import DomainError
from projects.models import DeviceGrant, Scope

TEMPLATE = "projects/device.html"
DECISIONS = {"approve": True, "deny": False}


def _page(request: HttpRequest, status: int = 200, **context: Any) -> HttpResponse:
    return render(request, TEMPLATE, context, status=status)


def _confirmation(request: HttpRequest, grant: DeviceGrant, error: str = "") -> HttpResponse:
    try:
        project = device.device_grant_project(grant=grant, user=request.user)  # type: ignore[arg-type]
    except DomainError as exc:
        project, error = None, error or exc.message
    writes = Scope.WRITE in (grant.scopes or [])
    return _page(
        request,
        grant=grant,
        project=project,
        writes=writes,
        refused=error,
        token_days=settings.SESSIONLEDGER_DEVICE_TOKEN_DAYS,
    )


def _throttled(request: HttpRequest, exc: DomainError) -> HttpResponse:
    messages.error(request, exc.message)
    response = _page(request, status=429)
    response["Retry-After"] = str(exc.retry_after or 60)
    return response


@login_required
def device_approve(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request)
    try:
        device.device_code_attempt(user=request.user, ip=limits.client_address(request))  # type: ignore[arg-type]
    except DomainError as exc:
        return _throttled(request, exc)
    grant = device.device_grant_for_user_code(request.POST.get("code", ""))
    if grant is None:
        messages.error(request, "That code is unknown, expired or already used.")
        return _page(request)
    decision = request.POST.get("decision", "")
    if decision not in DECISIONS:
        return _confirmation(request, grant)
    return _decide(request, grant, approve=DECISIONS[decision])


def _decide(request: HttpRequest, grant: DeviceGrant, *, approve: bool) -> HttpResponse:
    try:
        device.device_decide(grant=grant, user=request.user, approve=approve)  # type: ignore[arg-type]
    except DomainError as exc:
        return _confirmation(request, grant, error=exc.message)
    messages.success(request, "Signed in: return to your terminal." if approve else "Sign-in denied.")
    return _page(request, done=True)
