"""``sessionledger login``'s device flow: start, approve in the browser, poll for the token once."""

from __future__ import annotations

from rest_framework.test import APIClient

from projects.models import ApiToken


def _start(client: APIClient) -> dict:
    response = client.post("/api/v1/auth/device", {"client_name": "laptop"}, format="json")
    assert response.status_code == 201
    return response.json()


def _poll(client: APIClient, code: str):
    return client.post("/api/v1/auth/device/token", {"device_code": code}, format="json")


def test_an_approved_device_login_yields_a_working_token_exactly_once(world, client) -> None:
    api = APIClient()
    started = _start(api)
    assert started["verification_uri_complete"].endswith(f"/device?code={started['user_code']}")
    pending = _poll(api, started["device_code"])
    assert pending.status_code == 428 and pending.json()["error"]["code"] == "authorization_pending"

    client.force_login(world.member)
    page = client.get(f"/device?code={started['user_code']}")
    assert started["user_code"] in page.content.decode()
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
    assert client.get("/device?code=ABCD-EFGH").status_code == 302


def test_an_unknown_user_code_says_so(world, client) -> None:
    client.force_login(world.member)
    assert "unknown, expired" in client.get("/device?code=ZZZZ-ZZZZ").content.decode()
