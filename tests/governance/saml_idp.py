"""A real SAML 2.0 identity provider for the SAML tests: pysaml2's IdP (``saml2.server.Server``) in a
second process on loopback, ``python -m tests.governance.saml_idp PORT``.

It generates its own RSA key and certificate, serves its metadata (``/metadata``) and its certificate
(``/cert``, base64 DER), and answers an AuthnRequest at ``/sso`` (HTTP-Redirect binding) with pysaml2's
signed Response in the auto-posting form a browser would get (HTTP-POST binding). Where a real IdP's
login page asks who you are, ``/sso`` takes the identity from extra query parameters the test appends:
``email``, ``name_id``, and for the attacks ``audience`` (the SP it issues for), ``minutes`` (the
validity, negative for an expired assertion) and ``sign`` (``assertion``, ``response`` or ``none``).

pysaml2 signs through the ``xmlsec1`` program; this machine has the library, not the program, so
signing goes through python-xmlsec (the same libxmlsec1) behind pysaml2's own ``CryptoBackend`` seam.
"""

from __future__ import annotations

import base64
import datetime
import html
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, make_server

NAME_ID_EMAIL = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
EMAIL_ATTRIBUTE = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"
DSIG = "http://www.w3.org/2000/09/xmldsig#"
GIVEN_NAME_ATTRIBUTE = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname"


def key_and_certificate(directory: Path) -> tuple[Path, Path, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test IdP")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    key_path, cert_path = directory / "idp.key", directory / "idp.crt"
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path, base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def _crypto_backend() -> Any:
    import xmlsec
    from lxml import etree
    from saml2.sigver import CryptoBackend

    class PythonXmlsec(CryptoBackend):  # type: ignore[misc]
        """pysaml2 hands over the statement with an empty ds:Signature template in the node to sign."""

        version = "1.3"

        def sign_statement(self, statement: Any, node_name: str, key_file: str, node_id: str) -> str:
            root = etree.fromstring(statement if isinstance(statement, bytes) else str(statement).encode())
            xmlsec.tree.add_ids(root, ["ID"])
            node = root if root.get("ID") == node_id else root.xpath("//*[@ID=$id]", id=node_id)[0]
            template = node.find("{http://www.w3.org/2000/09/xmldsig#}Signature")
            context = xmlsec.SignatureContext()
            context.key = xmlsec.Key.from_file(key_file, xmlsec.constants.KeyDataFormatPem)
            context.sign(template)
            return str(etree.tostring(root, xml_declaration=True, encoding="UTF-8").decode())

    return PythonXmlsec()


class IdP:
    def __init__(self, url: str, directory: Path) -> None:
        from saml2 import BINDING_HTTP_REDIRECT
        from saml2.config import IdPConfig
        from saml2.saml import NAME_FORMAT_URI
        from saml2.server import Server

        self.url = url
        key_path, cert_path, self.cert = key_and_certificate(directory)
        config = IdPConfig()
        config.load(
            {
                "entityid": f"{url}/metadata",
                "service": {
                    "idp": {
                        "endpoints": {"single_sign_on_service": [(f"{url}/sso", BINDING_HTTP_REDIRECT)]},
                        "name_id_format": [NAME_ID_EMAIL],
                        "policy": {"default": {"lifetime": {"minutes": 5}, "name_form": NAME_FORMAT_URI}},
                    }
                },
                "key_file": str(key_path),
                "cert_file": str(cert_path),
                "xmlsec_binary": sys.executable,  # never run: signing is python-xmlsec's (above)
            }
        )
        self.server = Server(config=config)
        self.server.sec.crypto = _crypto_backend()
        # No SP metadata: the SP is whoever the AuthnRequest names, and nothing is encrypted for it
        self.server.has_encrypt_cert_in_metadata = lambda sp_entity_id: False

    def metadata(self) -> str:
        from saml2.metadata import entity_descriptor

        config = self.server.config
        binary, config.xmlsec_binary = config.xmlsec_binary, None  # else pysaml2 runs it for its algorithms
        try:
            return str(entity_descriptor(config))
        finally:
            config.xmlsec_binary = binary

    def answer(self, query: dict[str, str]) -> str:
        """The auto-posting form carrying the signed Response to the AuthnRequest in ``query``."""
        from saml2 import BINDING_HTTP_REDIRECT
        from saml2.assertion import Policy
        from saml2.saml import NAME_FORMAT_URI, NameID

        request = self.server.parse_authn_request(query["SAMLRequest"], BINDING_HTTP_REDIRECT).message
        email = query.get("email", "")
        name_id = NameID(format=NAME_ID_EMAIL, text=query.get("name_id", email))
        # How long the assertion is valid: negative for one that has already expired
        lifetime = {"lifetime": {"minutes": int(query.get("minutes", "5"))}, "name_form": NAME_FORMAT_URI}
        sign = query.get("sign", "assertion")
        sha = query.get("algorithm", "sha256")
        response = self.server.create_authn_response(
            identity={EMAIL_ATTRIBUTE: [email], GIVEN_NAME_ATTRIBUTE: [query.get("given_name", "Ada")]},
            in_response_to=None if query.get("unsolicited") else request.id,  # IdP-initiated
            destination=request.assertion_consumer_service_url,
            sp_entity_id=query.get("audience", request.issuer.text),
            name_id=name_id,
            release_policy=Policy({"default": lifetime}, mds=self.server.metadata),
            authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"},
            sign_assertion=sign == "assertion",
            sign_response=sign == "response",
            sign_alg=f"http://www.w3.org/2001/04/xmldsig-more#rsa-{sha}" if sha != "sha1" else f"{DSIG}rsa-sha1",
            digest_alg=f"http://www.w3.org/2001/04/xmlenc#{sha}" if sha != "sha1" else f"{DSIG}sha1",
        )
        encoded = base64.b64encode(str(response).encode()).decode()
        fields = {"SAMLResponse": encoded, "RelayState": query.get("RelayState", "")}
        inputs = "".join(
            f'<input type="hidden" name="{name}" value="{html.escape(value)}">' for name, value in fields.items()
        )
        action = html.escape(request.assertion_consumer_service_url)
        return f'<form method="post" action="{action}">{inputs}<button>Continue</button></form>'


def _app(idp: IdP) -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        path = environ["PATH_INFO"]
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        if path == "/metadata":
            body, kind = idp.metadata(), "application/samlmetadata+xml"
        elif path == "/cert":
            body, kind = idp.cert, "text/plain"
        elif path == "/sso":
            try:
                body, kind = idp.answer(query), "text/html"
            except Exception:  # the test shows pysaml2's refusal
                start_response("400 Bad Request", [("Content-Type", "text/plain")])
                return [traceback.format_exc().encode()]
        else:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        start_response("200 OK", [("Content-Type", kind)])
        return [body.encode()]

    return app


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def main(port: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        idp = IdP(f"http://127.0.0.1:{port}", Path(directory))
        with make_server("127.0.0.1", port, _app(idp), handler_class=_Quiet) as server:
            server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]))
