"""``sessionledger login``'s device flow: start, approve in the browser, poll for the token once.

Device login is a phishing target: the page must not approve from a link, must
show the requester's claims as claims with where and when it started, guesses and approvals are
budgeted, stale grants go away, and the token it mints is restricted and expires.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from projects import device
from projects.models import ApiToken, DeviceGrant
from projects.tokens import hash_secret
from tests.factories import UserFactory

PHISHER_ADDRESS = "203.0.113.7"


def _start(client: APIClient, **body: object):
    extra = {"REMOTE_ADDR": PHISHER_ADDRESS, "HTTP_USER_AGENT": "python-urllib/3.11 sessionledger/0.1"}
    response = client.post("/api/v1/auth/device", {"client_name": "laptop", **body}, format="json", **extra)
    assert response.status_code == 201, response.content
    return response.json()


def _poll(client: APIClient, code: str):
    return client.post("/api/v1/auth/device/token", {"device_code": code}, format="json")


def _type_code(client, code: str, **extra: str):
    return client.post("/device", {"code": code}, **extra)


def _approve(client, code: str, **extra: str):
    _type_code(client, code, **extra)
    return client.post("/device", {"code": code, "decision": "approve"}, **extra)


def _token_of(started: dict) -> ApiToken:
    granted = _poll(APIClient(), started["device_code"])
    assert granted.status_code == 200, granted.content
    return ApiToken.objects.get(secret_hash=hash_secret(granted.json()["token"]))


# --- the flow ---------------------------------------------------------------------------------------


def test_an_approved_device_login_yields_a_working_token_exactly_once(world, client) -> None:
    api = APIClient()
    started = _start(api)
    assert started["verification_uri"].endswith("/device")
    pending = _poll(api, started["device_code"])
    assert pending.status_code == 428 and pending.json()["error"]["code"] == "authorization_pending"

    client.force_login(world.member)
    confirm = _type_code(client, started["user_code"])
    assert started["user_code"] in confirm.content.decode() and "Approve" in confirm.content.decode()
    client.post("/device", {"code": started["user_code"], "decision": "approve"})

    granted = _poll(api, started["device_code"])
    assert granted.status_code == 200
    secret = granted.json()["token"]
    assert ApiToken.objects.get(user=world.member).name == "sessionledger CLI laptop"
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert [p["slug"] for p in api.get("/api/v1/projects").json()] == [world.project.slug]
    assert _poll(APIClient(), started["device_code"]).json()["error"]["code"] == "invalid_grant"


def test_a_denied_device_login_is_refused(world, client) -> None:
    api = APIClient()
    started = _start(api)
    client.force_login(world.member)
    client.post("/device", {"code": started["user_code"].replace("-", "").lower(), "decision": "deny"})
    response = _poll(api, started["device_code"])
    assert response.status_code == 403 and response.json()["error"]["code"] == "access_denied"
    assert not ApiToken.objects.exists()


def test_the_approval_page_needs_a_login(db, client) -> None:
    assert client.get("/device").status_code == 302
    assert client.post("/device", {"code": "ABCD-EFGH", "decision": "approve"}).status_code == 302


def test_an_unknown_user_code_says_so(world, client) -> None:
    client.force_login(world.member)
    assert "unknown, expired" in _type_code(client, "ZZZZ-ZZZZ").content.decode()


# --- phishing --------------------------------------------------------------------------------------


def test_the_complete_uri_is_not_a_one_click_approve(world, client) -> None:
    started = _start(APIClient())
    assert "verification_uri_complete" not in started
    client.force_login(world.member)
    page = client.get(f"/device?code={started['user_code']}").content.decode()
    assert "Approve" not in page and started["user_code"] not in page
    assert 'name="code" value=""' in page, "the user types the code; a link does not fill it in"
    assert _poll(APIClient(), started["device_code"]).status_code == 428


def test_the_client_name_is_shown_as_untrusted_escaped_text(world, client) -> None:
    claimed = '<img src=x onerror=alert(1)>Sessionledger Security Team\u202e"'
    started = _start(APIClient(), client_name=claimed)
    client.force_login(world.member)
    page = _type_code(client, started["user_code"]).content.decode()
    assert "<img src=x" not in page and "\u202e" not in page
    shown = page[page.index('id="device-claimed-name"') :]
    shown = shown[: shown.index("</dd>")]
    assert "claimed by the requester, not verified" in shown
    assert "&lt;img src=x onerror=alert(1)&gt;Sessionledger Security Team&quot;" in shown


def test_the_approval_page_shows_where_and_when_the_request_started(world, client) -> None:
    started = _start(APIClient())
    client.force_login(world.member)
    page = _type_code(client, started["user_code"]).content.decode()
    assert PHISHER_ADDRESS in page and "python-urllib/3.11 sessionledger/0.1" in page
    grant = DeviceGrant.objects.get(user_code=started["user_code"])
    assert f'datetime="{grant.created_at.isoformat()}' in page
    assert "ago)" in page


# --- budgets ---------------------------------------------------------------------------------------


@pytest.fixture
def five_attempts(settings) -> None:
    settings.SESSIONLEDGER_DEVICE_CODE_RATE = "5/min"


def test_code_guesses_and_approve_posts_are_throttled_per_user(world, client, five_attempts) -> None:
    started = _start(APIClient())
    client.force_login(world.member)
    guesses = [_type_code(client, f"BBBB-BBB{c}", REMOTE_ADDR=f"198.51.100.{n}") for n, c in enumerate("BCDFG")]
    assert [g.status_code for g in guesses] == [200] * 5

    refused = _approve(client, started["user_code"], REMOTE_ADDR="198.51.100.99")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many attempts" in refused.content.decode()
    assert _poll(APIClient(), started["device_code"]).status_code == 428, "nothing was approved"


def test_code_guesses_are_throttled_per_address_across_users(world, client, five_attempts) -> None:
    for _ in range(5):
        client.force_login(UserFactory())
        _type_code(client, "BBBB-BBBB", REMOTE_ADDR="198.51.100.1")
    started = _start(APIClient())
    client.force_login(world.member)
    assert _approve(client, started["user_code"], REMOTE_ADDR="198.51.100.1").status_code == 429
    assert _approve(client, started["user_code"], REMOTE_ADDR="198.51.100.2").status_code == 200


def test_device_logins_started_from_one_address_are_throttled(db, settings) -> None:
    settings.SESSIONLEDGER_DEVICE_START_RATE = "3/min"
    api = APIClient()
    statuses = [api.post("/api/v1/auth/device", {}, format="json", REMOTE_ADDR="192.0.2.1").status_code for _ in "1234"]
    assert statuses == [201, 201, 201, 429]
    assert api.post("/api/v1/auth/device", {}, format="json", REMOTE_ADDR="192.0.2.2").status_code == 201
    assert DeviceGrant.objects.count() == 4


def test_a_forged_forwarded_for_does_not_buy_fresh_budgets(db, settings) -> None:
    settings.SESSIONLEDGER_DEVICE_START_RATE = "2/min"
    api = APIClient()
    statuses = [
        api.post(
            "/api/v1/auth/device", {}, format="json", REMOTE_ADDR="192.0.2.9", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}"
        ).status_code
        for n in range(3)
    ]
    assert statuses == [201, 201, 429]


def test_polls_from_one_address_are_throttled(db, settings) -> None:
    settings.SESSIONLEDGER_DEVICE_POLL_RATE = "3/min"
    api = APIClient()
    statuses = [
        api.post("/api/v1/auth/device/token", {"device_code": "x"}, format="json", REMOTE_ADDR="192.0.2.3").status_code
        for _ in "1234"
    ]
    assert statuses == [400, 400, 400, 429]


# --- purge -----------------------------------------------------------------------------------------


def test_used_and_long_expired_grants_are_purged(world, client) -> None:
    used, expired, recent = (_start(APIClient()) for _ in range(3))
    client.force_login(world.member)
    _approve(client, used["user_code"])
    _token_of(used)
    DeviceGrant.objects.filter(user_code=expired["user_code"]).update(expires_at=timezone.now() - timedelta(hours=2))
    DeviceGrant.objects.filter(user_code=recent["user_code"]).update(expires_at=timezone.now() - timedelta(minutes=1))

    _start(APIClient())

    left = set(DeviceGrant.objects.values_list("user_code", flat=True))
    assert used["user_code"] not in left and expired["user_code"] not in left
    assert recent["user_code"] in left
    assert _poll(APIClient(), recent["device_code"]).json()["error"]["code"] == "expired_token"


# --- the token it mints ----------------------------------------------------------------------------


def test_the_device_token_expires_after_the_configured_days(world, client, settings) -> None:
    settings.SESSIONLEDGER_DEVICE_TOKEN_DAYS = 30
    started = _start(APIClient())
    client.force_login(world.member)
    _approve(client, started["user_code"])
    token = _token_of(started)
    assert token.expires_at is not None
    assert abs(token.expires_at - (timezone.now() + timedelta(days=30))) < timedelta(minutes=5)
    assert token.scopes == ["read", "write"] and token.project is None


def test_the_device_token_is_restricted_to_the_requested_project_and_scopes(world, client) -> None:
    started = _start(APIClient(), project=world.project.slug, scopes=["read"])
    client.force_login(world.member)
    page = _approve(client, started["user_code"])
    assert page.status_code == 200
    token = _token_of(started)
    assert token.project == world.project and token.scopes == ["read"]
    assert token.expires_at is not None and token.expires_at > timezone.now() + timedelta(days=89)


def test_the_approval_page_says_what_the_token_will_allow(world, client) -> None:
    started = _start(APIClient(), project=world.project.slug, scopes=["read"])
    client.force_login(world.member)
    page = _type_code(client, started["user_code"]).content.decode()
    access = page[page.index('id="device-access"') :]
    assert "only the project <strong>Acme Api</strong>, read only; expires in 90 days" in access


def test_a_device_login_for_a_project_i_am_not_in_cannot_be_approved(world, client) -> None:
    started = _start(APIClient(), project=world.other_project.slug)
    client.force_login(world.member)
    page = _type_code(client, started["user_code"]).content.decode()
    assert "You are not a member of a project named “globex-web”" in page
    assert 'value="approve"' not in page
    refused = client.post("/device", {"code": started["user_code"], "decision": "approve"})
    assert "You are not a member" in refused.content.decode()
    assert _poll(APIClient(), started["device_code"]).status_code == 428
    assert not ApiToken.objects.filter(user=world.member, name__startswith="sessionledger CLI").exists()


def test_a_long_client_name_still_makes_a_token(world, client) -> None:
    started = _start(APIClient(), client_name="x" * 200)
    client.force_login(world.member)
    _approve(client, started["user_code"])
    assert len(_token_of(started).name) <= 100


def test_device_codes_are_looked_up_only_while_open(world) -> None:
    started = _start(APIClient())
    assert device.device_grant_for_user_code(started["user_code"].lower().replace("-", " ")) is not None
    DeviceGrant.objects.update(expires_at=timezone.now())
    assert device.device_grant_for_user_code(started["user_code"]) is None
