"""HTTPS requests share one TLS context per process and still verify every certificate
(docs/client.md "Deadlines").

Each connection used to build its own context, reading the system's whole CA bundle again for
every request of an upload. The servers here are real TLS servers on 127.0.0.1 with certificates
made for the test; `SSL_CERT_FILE` makes one of them trusted, as a company CA would be.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sessionledger import api
from sessionledger.api import ApiError, Client
from tests.client.test_api_resolve import Answer, serving

ANSWER = {"results": []}  # what `Answer` says


def certificate(directory: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (and no host name); (cert, key) PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{name}.pem", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def serve(cert: Path, key: Path) -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    yield from serving(server)


@pytest.fixture
def certs(tmp_path) -> dict[str, tuple[Path, Path]]:
    return {name: certificate(tmp_path, name) for name in ("trusted", "stranger")}


@pytest.fixture
def trusted_server(certs) -> Iterator[int]:
    yield from serve(*certs["trusted"])


@pytest.fixture
def stranger_server(certs) -> Iterator[int]:
    yield from serve(*certs["stranger"])


@pytest.fixture
def bundle_reads(monkeypatch, certs) -> list[int]:
    """Trust the `trusted` certificate (as a company CA is trusted); count how often a context
    reads the trusted certificates, starting from a process that made none yet."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certs["trusted"][0]))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    api.tls_context.cache_clear()
    reads: list[int] = []
    load = ssl.SSLContext.load_default_certs

    def counted(self: ssl.SSLContext, *args: object) -> None:
        reads.append(1)
        load(self, *args)

    monkeypatch.setattr(ssl.SSLContext, "load_default_certs", counted)
    yield reads
    api.tls_context.cache_clear()  # the next test's process state: no context made with this CA file


def test_many_https_requests_read_the_trusted_certificates_once(trusted_server, bundle_reads) -> None:
    client = Client(f"https://127.0.0.1:{trusted_server}", timeout=10)

    answers = [client.get("/ping") for _ in range(3)]

    assert answers == [ANSWER] * 3
    assert len(bundle_reads) == 1


def test_the_shared_context_still_refuses_an_untrusted_certificate(
    trusted_server, stranger_server, bundle_reads
) -> None:
    assert Client(f"https://127.0.0.1:{trusted_server}", timeout=10).get("/ping") == ANSWER

    with pytest.raises(ApiError) as refused:
        Client(f"https://127.0.0.1:{stranger_server}", timeout=10).get("/ping")

    assert refused.value.code == "unreachable" and "CERTIFICATE_VERIFY_FAILED" in refused.value.message
    assert len(bundle_reads) == 1


def test_the_shared_context_still_checks_the_host_name(trusted_server, bundle_reads) -> None:
    """The trusted certificate names 127.0.0.1, not `localhost`."""
    assert Client(f"https://127.0.0.1:{trusted_server}", timeout=10).get("/ping") == ANSWER

    with pytest.raises(ApiError) as refused:
        Client(f"https://localhost:{trusted_server}", timeout=10).get("/ping")

    assert "CERTIFICATE_VERIFY_FAILED" in refused.value.message and "localhost" in refused.value.message
