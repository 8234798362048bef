"""Account mail: the outbox's .eml files (RFC 5322, written atomically) and the SMTP URL's parts."""

from __future__ import annotations

import asyncio
import base64
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


class SmtpListener:
    """A small SMTP server on loopback (RFC 5321: EHLO, AUTH PLAIN, MAIL, RCPT, DATA, QUIT) that keeps what
    it is sent: the real smtplib conversation of ``store.mail`` against a real socket."""

    def __init__(self) -> None:
        self.logins: list[str] = []
        self.messages: list[tuple[str, list[str], bytes]] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sender, recipients = "", []
        writer.write(b"220 test ESMTP\r\n")
        while line := (await reader.readline()).decode().rstrip("\r\n"):
            verb = line.split(" ", 1)[0].upper()
            if verb == "EHLO":
                writer.write(b"250-test\r\n250 AUTH PLAIN\r\n")
            elif verb == "AUTH":
                self.logins.append(base64.b64decode(line.split()[2]).decode())
                writer.write(b"235 accepted\r\n")
            elif verb == "MAIL":
                sender = line
                writer.write(b"250 ok\r\n")
            elif verb == "RCPT":
                recipients.append(line)
                writer.write(b"250 ok\r\n")
            elif verb == "DATA":
                writer.write(b"354 go on\r\n")
                self.messages.append((sender, recipients, await reader.readuntil(b"\r\n.\r\n")))
                writer.write(b"250 queued\r\n")
            else:
                writer.write(b"221 bye\r\n")
                break
            await writer.drain()
        writer.close()


async def test_with_an_smtp_url_the_message_goes_to_that_server(tmp_path: Path) -> None:
    listener = SmtpListener()
    server = await asyncio.start_server(listener.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        settings = make_settings(tmp_path, smtp_url=f"smtp://relay:s%40cret@127.0.0.1:{port}")
        await mail.send(settings, "ana@corp.example", "Choose a new password", "The link\n")
    finally:
        server.close()
        await server.wait_closed()
    assert listener.logins == ["\0relay\0s@cret"]
    [(sender, recipients, data)] = listener.messages
    assert "no-reply@" in sender and [r.lower() for r in recipients] == ["rcpt to:<ana@corp.example>"]
    assert b"Subject: Choose a new password" in data and b"The link" in data
    assert not (tmp_path / "outbox").exists()
