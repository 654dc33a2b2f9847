"""The browser half of device login: the user confirms the code their terminal shows."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from projects import device


@login_required
def device_approve(request: HttpRequest) -> HttpResponse:
    code = (request.POST.get("code") or request.GET.get("code") or "").strip()
    grant = device.device_grant_for_user_code(code) if code else None
    if request.method == "POST" and grant is not None:
        approve = request.POST.get("decision") == "approve"
        device.device_decide(grant=grant, user=request.user, approve=approve)
        messages.success(request, "Signed in: return to your terminal." if approve else "Sign-in denied.")
        return render(request, "projects/device.html", {"done": True})
    if code and grant is None:
        messages.error(request, "That code is unknown, expired or already used.")
    return render(request, "projects/device.html", {"grant": grant, "code": code})
