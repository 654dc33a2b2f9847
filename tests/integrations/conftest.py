from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.integrations.fakeforge import GITLAB_TOKEN, FakeForge, running
from tests.integrations.payloads import GITHUB_SECRET, GITLAB_SECRET
from tests.integrations.story import Story, bind


@pytest.fixture(scope="session")
def app_key() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


@pytest.fixture
def forge(settings, app_key) -> Iterator[FakeForge]:
    private, public = app_key
    with running(FakeForge(app_id="4242", public_key=public)) as fake:
        settings.SESSIONLEDGER_GITHUB_APP_ID = "4242"
        settings.SESSIONLEDGER_GITHUB_APP_PRIVATE_KEY = private
        settings.SESSIONLEDGER_GITHUB_WEBHOOK_SECRET = GITHUB_SECRET
        settings.SESSIONLEDGER_GITHUB_API_URL = fake.url
        settings.SESSIONLEDGER_GITLAB_URL = fake.url
        settings.SESSIONLEDGER_GITLAB_TOKEN = GITLAB_TOKEN
        settings.SESSIONLEDGER_GITLAB_WEBHOOK_SECRET = GITLAB_SECRET
        yield fake


@pytest.fixture
def story(world, forge, api_as) -> Story:
    """acme/api bound to the project, a member uploading its sessions, the fake forge answering."""
    bind(world.project)
    return Story(forge=forge, client=api_as(world.member), slug=world.project.slug)
