"""Account mail: the outbox's .eml files (RFC 5322, written atomically) and the SMTP URL's parts."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path

import pytest
from support import make_settings

from store import mail
from store.mail import SmtpServer, smtp_server


async def test_without_smtp_each_message_is_an_eml_file_in_the_outbox(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, public_url="https://cti.example/app")
    await mail.send(settings, "ana@corp.example", "Choose a new password", "Open: https://cti.example/x\n")
    await mail.send(settings, "bob@corp.example", "Zweite Nachricht – ü", "Hallo\n")
    files = sorted((tmp_path / "outbox").iterdir())
    assert [path.suffix for path in files] == [".eml", ".eml"]  # no partial file left behind
    first = email.message_from_bytes(files[0].read_bytes(), policy=email.policy.default)
    assert first["To"] == "ana@corp.example" and first["From"] == "ctiwire <no-reply@cti.example>"
    assert first["Subject"] == "Choose a new password" and first["Date"] and first["Message-ID"]
    assert first.get_content() == "Open: https://cti.example/x\n"  # type: ignore[attr-defined]
    second = email.message_from_bytes(files[1].read_bytes(), policy=email.policy.default)
    assert second["Subject"] == "Zweite Nachricht – ü" and second["To"] == "bob@corp.example"


@pytest.mark.parametrize(("url", "server"), [
    ("smtp://mail.example", SmtpServer("mail.example", 25, False, None, None)),
    ("smtps://mail.example", SmtpServer("mail.example", 465, True, None, None)),
    ("smtp://relay%40corp:p%3Ass%40word@mail.example:587", SmtpServer("mail.example", 587, False, "relay@corp",
                                                                      "p:ss@word")),
    ("smtps://user:@[2001:db8::1]:2465", SmtpServer("2001:db8::1", 2465, True, "user", "")),
])
def test_the_smtp_url_names_host_port_tls_and_login(url: str, server: SmtpServer) -> None:
    assert smtp_server(url) == server


@pytest.mark.parametrize("url", ["mail.example:25", "imap://mail.example", "smtp://"])
def test_a_url_that_is_no_smtp_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="not an SMTP URL"):
        smtp_server(url)
