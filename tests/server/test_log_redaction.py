"""No log line ever contains an API key, not even Tornado's line about a malformed header."""

from __future__ import annotations

import base64
import logging
import socket

import pytest
from support import cli_env, spawn_server

from application.logs import REDACTED, RedactKeys

pytestmark = pytest.mark.slow  # a server process

SECRET_NUL = "sk_live_NULsecretNULsecretNULsecret0123456789abcd"
SECRET_CR = "sk_live_CRsecretCRsecretCRsecretCRsecret0123456789"
SECRET_BASIC = "sk_live_BASICsecretBASICsecretBASICsecret012345678"
# HTTP Basic credentials carry the key base64-encoded: no ``sk_live_`` in the header for a filter to see.
BASIC_B64 = base64.b64encode(f"siem:{SECRET_BASIC}".encode())


def _raw(port: int, header: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET /api/v1/articles HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n\r\n")
        try:
            return sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            return b""


def test_keys_in_malformed_headers_are_redacted_in_the_server_log(tmp_path) -> None:
    server = spawn_server(cli_env(tmp_path, CTIWIRE_LOG_LEVEL="DEBUG"), "--no-seed")
    port = int(server.url.rsplit(":", 1)[1])
    try:
        half = len(SECRET_NUL) // 2
        _raw(port, b"Authorization: Bearer " + SECRET_NUL[:half].encode() + b"\x00" + SECRET_NUL[half:].encode())
        _raw(port, b"X-API-Key: " + SECRET_CR[:half].encode() + b"\r" + SECRET_CR[half:].encode())
        _raw(port, b"Authorization: Bearer " + SECRET_NUL.encode())  # well formed: unknown key, 401
        _raw(port, b"Authorization: Basic " + BASIC_B64[:20] + b"\x00" + BASIC_B64[20:])
        _raw(port, b"Authorization: Basic " + BASIC_B64[:20] + b"\r" + BASIC_B64[20:])
        _raw(port, b"Authorization: Basic " + BASIC_B64 + b"!!")  # not base64: answered 401 on TAXII
    finally:
        server.stop()
    log = server.process.stderr.read() if server.process.stderr else ""
    assert "Malformed HTTP message" in log or "Invalid header" in log or "401" in log  # the lines were written
    for secret in (SECRET_NUL, SECRET_CR, SECRET_BASIC, BASIC_B64.decode()):
        for piece in (secret[8:20], secret[-20:]):
            assert piece not in log, f"{piece!r} leaked into the log"


def test_the_filter_redacts_messages_arguments_and_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("ctiwire.test.redaction")
    caplog.handler.addFilter(RedactKeys())
    try:
        raise ValueError(f"bad key {SECRET_CR}")
    except ValueError:
        logger.exception("header %r rejected", f"Bearer {SECRET_NUL[:10]}\\x00{SECRET_NUL[10:]}")
    text = caplog.text
    assert REDACTED in text and SECRET_NUL[12:] not in text and SECRET_CR[10:] not in text


def test_the_filter_redacts_basic_credentials(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("ctiwire.test.redaction")
    caplog.handler.addFilter(RedactKeys())
    encoded = BASIC_B64.decode()
    logger.warning("Invalid header value %r", f"BASIC {encoded[:12]}\\x00{encoded[12:]}")
    logger.warning("header: basic\t%s", encoded)
    logger.warning("a basic check passed")  # a word, not credentials: the line keeps its meaning
    assert encoded[:12] not in caplog.text and encoded[-12:] not in caplog.text
    assert caplog.text.count("[REDACTED]") == 2 and "a basic check passed" in caplog.text
