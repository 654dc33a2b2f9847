"""SCIM answers every bad input with a SCIM error (RFC 7644 §3.12), never a 500 (docs/security.md
"Offboarding"): the identity provider is a machine that retries, and a 500 hides what it got wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from governance.models import ScimGroup
from projects.models import User
from tests.factories import UserFactory

SCIM_TOKEN = "scim-token-for-tests-0123456789"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
USERS = "/scim/v2/Users"
HUGE = "99999999999999999999"  # beyond PostgreSQL's bigint
LONG_DOMAIN = ".".join(["d" * 63] * 4) + ".test"  # 260 characters, each label valid


@pytest.fixture
def scim(db, settings) -> APIClient:
    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {SCIM_TOKEN}")
    return client


@pytest.fixture
def someone(db) -> User:
    return UserFactory(email="dana@example.com", name="Dana")


def _raw(body: str) -> dict[str, Any]:
    return {"data": body, "content_type": "application/scim+json"}


def _json(body: Any) -> dict[str, Any]:
    return _raw(json.dumps(body))


def _op(path: Any, value: Any, op: Any = "replace") -> dict[str, Any]:
    return _json({"Operations": [{"op": op, "path": path, "value": value}]})


def _deep(levels: int) -> str:
    return '{"userName": ' + "[" * levels + "]" * levels + "}"


# (method, path under /scim/v2, request, status, scimType)
BAD: list[tuple[str, str, dict[str, Any], int, str]] = [
    # list: paging
    ("get", "Users", {"data": {"startIndex": HUGE}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"startIndex": "9223372036854775808"}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"startIndex": "9" * 5000}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"startIndex": "abc"}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"startIndex": "1.5"}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"startIndex": "1e3"}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"startIndex": "²"}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"startIndex": "1\x00"}}, 400, "invalidSyntax"),  # refused before any view
    ("get", "Users", {"data": {"count": "many"}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"count": "-" + HUGE}}, 400, "invalidValue"),
    # list: filters
    ("get", "Users", {"data": {"filter": 'emails co "x"'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": 'userName eq "a"b"'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": "userName eq 'a@b.c'"}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": "userName eq a@b.c"}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": 'userName eq ""'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": 'userName eq "a\\"b@c.d"'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": 'userName eq "a\x00b@c.d"'}}, 400, "invalidSyntax"),
    ("get", "Users", {"data": {"filter": 'userName eq "a\nb@c.d"'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": f'userName eq "{"a" * 300}@b.c"'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": 'userName eq "a@b.c" or userName eq "d@e.f"'}}, 400, "invalidFilter"),
    # create: the body
    ("post", "Users", _raw("[]"), 400, "invalidSyntax"),
    ("post", "Users", _raw('"dana@example.com"'), 400, "invalidSyntax"),
    ("post", "Users", _raw("5"), 400, "invalidSyntax"),
    ("post", "Users", _raw("null"), 400, "invalidSyntax"),
    ("post", "Users", _raw('{"userName": '), 400, "invalidSyntax"),
    ("post", "Users", _raw('{"userName": "\\ud800@example.com"}'), 400, "invalidSyntax"),
    ("post", "Users", _raw(_deep(100)), 400, "invalidSyntax"),
    ("post", "Users", {"data": '{"userName": "ok@example.com"}', "content_type": "application/json"}, 201, ""),
    ("post", "Users", {"data": _deep(100), "content_type": "application/json"}, 400, "invalidSyntax"),
    ("post", "Users", _json({"userName": "big@example.com", "pad": "x" * 300_000}), 413, ""),
    ("post", "Users", {"data": "userName=a@b.c", "content_type": "text/plain"}, 415, ""),
    # create: userName
    ("post", "Users", _json({}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": 5}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": None}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": ["a@b.c"]}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": {"value": "a@b.c"}}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "not-an-address"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "a@"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "a" * 250 + "@b.test"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": f"a@{LONG_DOMAIN}"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "nul\x00@example.com"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "a@exa\x00mple.com"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": '"\x01"@example.com'}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "line\nbreak@example.com"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "DANA@Example.COM"}), 409, "uniqueness"),
    # create: the other fields
    ("post", "Users", _json({"userName": "e@example.com", "active": "yes"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "active": 1}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "active": None}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "displayName": 5}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "displayName": "x" * 151}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "displayName": "E\x00ve"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "name": "Eve"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "name": {"givenName": 5}}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "name": {"formatted": "E\x00"}}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "name": {"familyName": "x" * 200}}), 400, "invalidValue"),
    # one user: get, replace, patch, delete
    ("get", "Users/abc", {}, 404, ""),
    ("get", f"Users/{HUGE}", {}, 404, ""),
    ("get", "Users/+1", {}, 404, ""),
    ("get", "Users/-1", {}, 404, ""),
    ("delete", f"Users/{HUGE}", {}, 404, ""),
    ("put", "{user}", _raw("[]"), 400, "invalidSyntax"),
    ("put", "{user}", _raw("null"), 400, "invalidSyntax"),
    ("put", "{user}", _json({"active": "no"}), 400, "invalidValue"),
    ("put", "{user}", _json({"displayName": ["Dana"]}), 400, "invalidValue"),
    ("put", "{user}", _json({"displayName": "D\x00"}), 400, "invalidValue"),
    ("put", f"Users/{HUGE}", _json({"active": False}), 404, ""),
    ("patch", "{user}", _raw("[]"), 400, "invalidSyntax"),
    ("patch", "{user}", _json({"Operations": "replace"}), 400, "invalidSyntax"),
    ("patch", "{user}", _json({"Operations": [5]}), 400, "invalidSyntax"),
    ("patch", "{user}", _op("active", False, op="remove"), 400, "invalidSyntax"),
    ("patch", "{user}", _op("active", False, op=["replace"]), 400, "invalidSyntax"),
    ("patch", "{user}", _op("active", "maybe"), 400, "invalidValue"),
    ("patch", "{user}", _op("displayName", 5), 400, "invalidValue"),
    ("patch", "{user}", _op("displayName", "x" * 151), 400, "invalidValue"),
    ("patch", "{user}", _op("name.formatted", "D\x00"), 400, "invalidValue"),
    ("patch", "{user}", _op(None, "active"), 400, "invalidValue"),
    ("patch", "{user}", _op(None, {"displayName": {"x": 1}}), 400, "invalidValue"),
    ("patch", "{user}", _op(5, True), 400, "invalidPath"),
    # users: what Okta and Entra send, malformed
    ("get", "Users", {"data": {"filter": 'displayName eq "x"'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": 'emails[type eq work].value eq "a@b.c"'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"filter": 'userName eq "a" and'}}, 400, "invalidFilter"),
    ("get", "Users", {"data": {"attributes": "userName,a b"}}, 400, "invalidValue"),
    ("get", "Users", {"data": {"excludedAttributes": "x" * 300}}, 400, "invalidValue"),
    ("post", "Users", _json({"userName": "ann"}), 400, "invalidValue"),  # no address anywhere
    ("post", "Users", _json({"userName": "ann", "emails": "a@b.c"}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "ann", "emails": [{"value": "nope"}]}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "ann", "emails": [{"type": "work"}]}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "ann", "emails": [{"value": "dana@example.com"}]}), 409, "uniqueness"),
    ("post", "Users", _json({"userName": "e@example.com", "externalId": 5}), 400, "invalidValue"),
    ("post", "Users", _json({"userName": "e@example.com", "externalId": "x\x01"}), 400, "invalidValue"),
    ("patch", "{user}", _op("userName", None, op="remove"), 400, "invalidValue"),
    ("patch", "{user}", _json({"Operations": [{"op": "remove"}]}), 400, "noTarget"),
    ("patch", "{user}", _op("emails", [{"value": "not-an-address"}]), 400, "invalidValue"),
    ("patch", "{user}", _op('emails[type eq "work"].value', 5), 400, "invalidValue"),
    ("patch", "{user}", _op("name.givenName", ["Dana"]), 400, "invalidValue"),
    ("patch", "{user}", _op("externalId", "x" * 256), 400, "invalidValue"),
    ("patch", "{user}", _op("op", "x", op="Copy"), 400, "invalidSyntax"),
    # groups
    ("post", "Groups", _json({}), 400, "invalidValue"),
    ("post", "Groups", _json({"displayName": 5}), 400, "invalidValue"),
    ("post", "Groups", _json({"displayName": "  "}), 400, "invalidValue"),
    ("post", "Groups", _json({"displayName": "g", "members": [{"value": "abc"}]}), 400, "invalidValue"),
    ("post", "Groups", _json({"displayName": "g", "members": [{"value": HUGE}]}), 400, "invalidValue"),
    ("post", "Groups", _json({"displayName": "g", "members": [{"value": "999999"}]}), 400, "invalidValue"),
    ("post", "Groups", _json({"displayName": "g", "members": [{"value": 5}]}), 400, "invalidValue"),
    ("post", "Groups", _json({"displayName": "g", "members": "everyone"}), 400, "invalidValue"),
    ("post", "Groups", _json({"displayName": "Staff"}), 409, "uniqueness"),  # the {group} is "staff"
    ("get", "Groups", {"data": {"filter": 'members co "x"'}}, 400, "invalidFilter"),
    ("get", "Groups/abc", {}, 404, ""),
    ("get", "Groups/" + "0" * 400, {}, 404, ""),
    ("patch", "{group}", _op("members", [{"value": "abc"}], op="add"), 400, "invalidValue"),
    ("patch", "{group}", _op('members[value eq "abc"]', None, op="remove"), 400, "invalidValue"),
    ("patch", "{group}", _op("displayName", None, op="remove"), 400, "invalidValue"),
    ("patch", "{group}", _op("owner", "x"), 400, "invalidPath"),
    ("put", "{group}", _json({"displayName": ""}), 400, "invalidValue"),
    # discovery
    ("get", "Schemas/urn:nothing", {}, 404, ""),
    ("get", "ResourceTypes/Nope", {}, 404, ""),
    ("post", ".search", _json({}), 501, ""),
    ("post", "Schemas", _json({}), 405, ""),
    # elsewhere
    ("get", "Bulk", {}, 404, ""),  # not offered (ServiceProviderConfig says so)
    ("delete", "Users", {}, 405, ""),
    ("post", "{user}", _json({}), 405, ""),
]


def _call(scim: APIClient, method: str, path: str, request: dict[str, Any], user: User) -> Any:
    group = ScimGroup.objects.get_or_create(display_name="staff")[0]
    if User.objects.filter(pk=user.pk).exists():  # an earlier example may have deleted them
        group.members.add(user)
    path = path.replace("{group}", f"Groups/{group.pk}")
    url = "/scim/v2/" + path.replace("{user}", f"Users/{user.pk}")
    return getattr(scim, method)(url, **request)


def _assert_scim_error(response: Any, status: int, scim_type: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/scim+json")
    body = response.json()
    assert body["schemas"] == [ERROR_SCHEMA] and body["status"] == str(status) and body["detail"]
    assert body.get("scimType", "") == scim_type


@pytest.mark.parametrize(("method", "path", "request_", "status", "scim_type"), BAD, ids=range(len(BAD)))
def test_bad_scim_input_gets_a_scim_error_not_a_500(scim, someone, method, path, request_, status, scim_type) -> None:
    response = _call(scim, method, path, request_, someone)
    if status < 300:  # the control row: the same shape, well formed, is accepted
        assert response.status_code == status, response.content
        return
    _assert_scim_error(response, status, scim_type)
    someone.refresh_from_db()
    assert (someone.name, someone.is_active) == ("Dana", True)  # a refused change changes nothing
    assert (someone.email, someone.external_id, someone.scim_user_name) == ("dana@example.com", None, None)
    assert all(group.display_name == "staff" for group in ScimGroup.objects.all())


@pytest.mark.parametrize(
    ("params", "start", "items"),
    [
        ({"startIndex": "0"}, 1, 2),
        ({"startIndex": "-7"}, 1, 2),
        ({"startIndex": "3"}, 3, 0),
        ({"startIndex": "9223372036854775807"}, 9223372036854775807, 0),
        ({"count": "-3"}, 1, 0),
        ({"count": "9223372036854775807"}, 1, 2),
    ],
)
def test_paging_out_of_range_is_read_as_rfc_7644_says(scim, someone, params, start, items) -> None:
    """startIndex below 1 means 1, a negative count 0 (§3.4.2.4); past the end is an empty page."""
    UserFactory(email="erin@example.com")
    body = scim.get(USERS, params).json()
    assert (body["startIndex"], body["itemsPerPage"], len(body["Resources"])) == (start, items, items)
    assert body["totalResults"] == 2


def test_a_user_name_differing_only_in_case_is_the_same_user(scim, someone) -> None:
    found = scim.get(USERS, {"filter": 'userName eq "DANA@EXAMPLE.COM"'}).json()
    assert [user["id"] for user in found["Resources"]] == [str(someone.pk)]
    assert User.objects.filter(email__iexact="dana@example.com").count() == 1


def test_an_unknown_path_without_the_token_is_still_a_scim_401(scim) -> None:
    _assert_scim_error(APIClient().get("/scim/v2/Groups"), 401, "")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=300),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=4),
    max_leaves=12,
)
_FIELDS = st.sampled_from(
    ["userName", "active", "displayName", "name", "emails", "externalId", "members", "Operations", "schemas"]
)
_USERISH = st.dictionaries(_FIELDS, _JSON, max_size=4) | _JSON
_PATCH = st.fixed_dictionaries(
    {"Operations": st.lists(st.fixed_dictionaries({"op": _JSON, "path": _JSON, "value": _JSON}), max_size=3)}
)
_PARAM = st.text(max_size=40) | st.integers().map(str) | st.just(HUGE)


@hypothesis_settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["get", "post", "put", "patch", "delete"]),
    path=st.sampled_from(["Users", "{user}", "Users/{id}", "Groups", "{group}", "Groups/{id}"]),
    body=_USERISH | _PATCH,
    params=st.dictionaries(
        st.sampled_from(["filter", "startIndex", "count", "attributes", "excludedAttributes"]), _PARAM, max_size=3
    ),
    user_id=st.text(max_size=25),
)
def test_no_scim_input_gets_a_5xx(scim, someone, method, path, body, params, user_id) -> None:
    path = path.replace("{id}", user_id.replace("/", "").replace("?", "").replace("#", "") or "x")
    if method == "get":
        response = _call(scim, method, path, {"data": params}, someone)
    else:
        response = _call(scim, method, path, _json(body), someone)
    assert response.status_code < 500, response.content[:300]
    if response.status_code >= 400:
        assert response.json()["schemas"] == [ERROR_SCHEMA]


@pytest.mark.django_db(transaction=True)
def test_a_user_created_by_a_concurrent_push_since_the_check_is_a_409_not_a_500(settings) -> None:
    """Okta and Entra retry and push in parallel: the row appears, from another connection, between the
    existence check and the insert."""
    import psycopg
    from django.db import connection

    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {SCIM_TOKEN}")
    params = connection.get_connection_params()
    other = psycopg.connect(**{k: v for k, v in params.items() if k != "cursor_factory"}, autocommit=True)

    def insert_first(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if sql.startswith('INSERT INTO "projects_user"'):  # every existence check has passed
            other.execute(
                "INSERT INTO projects_user (email, name, password, is_active, is_staff, is_superuser, date_joined)"
                " VALUES ('race@example.com', '', '!', true, false, false, now())"
            )
        return execute(sql, params, many, context)

    with connection.execute_wrapper(insert_first):
        response = client.post(USERS, {"userName": "race@example.com"}, format="json")

    other.close()
    _assert_scim_error(response, 409, "uniqueness")
    assert User.objects.filter(email="race@example.com").count() == 1


def test_a_page_of_groups_costs_the_same_queries_whatever_its_size(scim) -> None:
    """Batch-loaded: the members of every group on a page come in one query, not one per group."""
    people = [UserFactory(email=f"member{n}@example.com") for n in range(3)]

    def page_with(groups: int) -> int:
        for n in range(groups):
            ScimGroup.objects.create(display_name=f"team-{groups}-{n}").members.add(*people)
        with CaptureQueriesContext(connection) as queries:
            listed = scim.get("/scim/v2/Groups", {"count": "200"})
        assert listed.status_code == 200 and all(len(g["members"]) == 3 for g in listed.json()["Resources"])
        return len(queries)

    assert page_with(2) == page_with(6)
