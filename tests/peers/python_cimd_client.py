"""Peer test: the official Python MCP SDK's OAuth client provider (`mcp` 2.x) connecting with a
Client ID Metadata Document (CIMD) instead of registering: its ``client_metadata_url`` is an
https URL on loopback, served by this script with a certificate of a throwaway test CA.

    tests/peers/.venv/bin/python tests/peers/python_cimd_client.py make-ca DIR
    KD_HUB_URL=http://127.0.0.1:PORT KD_CIMD_DIR=DIR tests/peers/.venv/bin/python tests/peers/python_cimd_client.py

``make-ca DIR`` writes ``DIR/ca.pem`` (a CA made here with ``cryptography``, valid a day) and
``DIR/leaf.pem`` + ``DIR/leaf.key`` (its certificate for IP 127.0.0.1). The hub is then started
with ``--outbound-allow-private --outbound-ca-file DIR/ca.pem`` (docs/decisions.md 420), so it
trusts the document's server. Run by tests/peers/browser_cimd.mjs, which drives the browser as
for python_oauth_client.py: this script prints ``AUTHORIZE <url>``, Chromium approves on the
consent screen, the redirect lands on this script's loopback callback.

The SDK then does the rest: discovery from the 401, the CIMD client_id (no registration, as the
hub's metadata says ``client_id_metadata_document_supported``), PKCE S256, the code exchange.
This script checks: the hub fetched the document (and nothing was registered: the client_id the
SDK keeps is the URL), the connection's app is the document's name, a tools/call works, and the
refresh token rotates for the URL client_id and the new access token works.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import os
import ssl
import sys
from pathlib import Path

import httpx2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp_types import Implementation
from peer_checks import check, checks
from python_oauth_client import BASE, Callback, Memory, data_of

NAME = "KarmaDue CIMD peer"


def make_ca(folder: Path) -> None:
    """A CA and its leaf for 127.0.0.1 (P-256, a day), as PEM files in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "KarmaDue peer test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (folder / "leaf.key").write_bytes(leaf_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


class Document:
    """The https server of the client's metadata document (any path answers it); counts GETs."""

    def __init__(self, folder: Path, redirect: str) -> None:
        self.folder = folder
        self.redirect = redirect
        self.hits = 0
        self.url = ""

    async def start(self) -> None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.folder / "leaf.pem", self.folder / "leaf.key")
        server = await asyncio.start_server(self.handle, "127.0.0.1", 0, ssl=context)
        self.url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/oauth/client.json"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            self.hits += 1
            body = json.dumps({
                "client_id": self.url,
                "client_name": NAME,
                "redirect_uris": [self.redirect],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }).encode()
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncache-control: max-age=600\r\n"
                         + b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
            await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()


async def refresh(storage: Memory, document_url: str) -> None:
    """The token endpoint by hand: rotation for the URL client_id; the new token works."""
    assert storage.tokens is not None
    async with httpx2.AsyncClient() as http:
        metadata = (await http.get(f"{BASE}/.well-known/oauth-authorization-server")).json()
        old = storage.tokens.refresh_token
        answer = await http.post(metadata["token_endpoint"], data={
            "grant_type": "refresh_token", "refresh_token": old, "client_id": document_url,
        })
        body = answer.json()
        check("refresh with the URL client_id gives a new pair", answer.status_code == 200
              and body.get("refresh_token") not in (None, old), body)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {body.get('access_token')}"}
        listed = await http.post(f"{BASE}/mcp", json=ping, headers=headers)
        check("the new access token works", listed.status_code == 200, listed.text[:300])


async def main(folder: Path) -> None:
    callback = Callback()
    await callback.start()
    redirect = f"http://127.0.0.1:{callback.port}/callback"
    document = Document(folder, redirect)
    await document.start()
    print(f"DOCUMENT {document.url}", flush=True)
    storage = Memory()
    provider = OAuthClientProvider(
        server_url=f"{BASE}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name=NAME,
            redirect_uris=[redirect],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=callback.redirect,
        callback_handler=callback.wait,
        client_metadata_url=document.url,
    )
    async with create_mcp_http_client(auth=provider) as http:
        client = Client(
            streamable_http_client(f"{BASE}/mcp", http_client=http),
            mode="legacy",
            client_info=Implementation(name="karmadue-python-cimd-peer", version="1.0.0"),
        )
        async with client:
            check("the SDK connected through OAuth", storage.tokens is not None, storage.tokens)
            client_id = storage.client.client_id if storage.client else None
            check("the SDK's client_id is the document's https URL (no registration)", client_id == document.url, client_id)
            check("the hub fetched the document over https", document.hits >= 1, document.hits)
            me = data_of(await client.call_tool("verify_agent", {}))
            connection = (((me.get("data") or {}).get("current") or {}).get("connection")) or {}
            check("tools/call verify_agent: the connection's app is the document's name",
                  me.get("ok") is True and connection.get("app") == NAME, me)
    await refresh(storage, document.url)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make-ca":
        make_ca(Path(sys.argv[2]))
        sys.exit(0)
    folder = os.environ.get("KD_CIMD_DIR", "")
    if not BASE or not folder:
        print("KD_HUB_URL and KD_CIMD_DIR must be set (or: make-ca DIR)", file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(main(Path(folder)))
    except Exception as error:  # noqa: BLE001 - a crash is one failed check, reported
        check("ran without an unexpected error", False, f"{type(error).__name__}: {error}")
    sys.exit(checks.summary())
