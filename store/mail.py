"""Account mail (password resets, address checks): SMTP when ``smtp_url`` is set, else an outbox folder.

Without ``CTIWIRE_SMTP_URL`` every message is an RFC 5322 ``.eml`` file in ``data_dir/outbox/``, written
to a temporary name and renamed (atomic on one file system), so a reader never sees half a message; a
newcomer opens the link from there, and the tests read it. SMTP runs in a thread (smtplib blocks) with a
timeout, so a slow mail server never holds the event loop.
"""

from __future__ import annotations

import asyncio
import os
import smtplib
import ssl
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from urllib.parse import unquote, urlsplit

from config.settings import Settings

OUTBOX = "outbox"
SMTP_TIMEOUT = 30.0  # seconds, per connection step
SENDER_NAME = "ctiwire"


@dataclass(frozen=True, slots=True)
class SmtpServer:
    """Where ``smtp://user:password@host:port`` (or ``smtps://``, TLS from the first byte) points."""

    host: str
    port: int
    tls: bool
    user: str | None
    password: str | None


def smtp_server(url: str) -> SmtpServer:
    """The parts of an SMTP URL; ports default to 25 (smtp, with STARTTLS when offered) and 465 (smtps)."""
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError("not an SMTP URL; allowed smtp://[user:password@]host[:port] or smtps://")
    tls = parts.scheme == "smtps"
    return SmtpServer(host=parts.hostname, port=parts.port or (465 if tls else 25), tls=tls,
                      user=unquote(parts.username) if parts.username else None,
                      password=unquote(parts.password) if parts.password is not None else None)


def sender(settings: Settings) -> str:
    """``From``: no-reply at the public address's host (or this machine's name)."""
    host = urlsplit(settings.public_url or "").hostname or "localhost"
    return f"{SENDER_NAME} <no-reply@{host}>"


def message(settings: Settings, to: str, subject: str, body: str) -> EmailMessage:
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = sender(settings), to, subject
    mail["Date"], mail["Message-ID"] = formatdate(localtime=False), make_msgid(domain="ctiwire")
    mail.set_content(body)
    return mail


async def send(settings: Settings, to: str, subject: str, body: str) -> None:
    """Deliver one plain-text message: by SMTP when configured, else into the outbox."""
    mail = message(settings, to, subject, body)
    if settings.smtp_url:
        await asyncio.to_thread(_smtp, smtp_server(settings.smtp_url), mail)
    else:
        await asyncio.to_thread(write_eml, outbox(settings), mail)


def outbox(settings: Settings) -> Path:
    return settings.data_dir / OUTBOX


def write_eml(folder: Path, mail: EmailMessage) -> Path:
    """``mail`` as ``<time>-<random>.eml`` in ``folder`` (names sort by time), made atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%fZ')}-{uuid.uuid4().hex[:12]}.eml"
    partial = folder / f".{name}.partial"
    partial.write_bytes(bytes(mail))
    os.replace(partial, folder / name)
    return folder / name


def _smtp(server: SmtpServer, mail: EmailMessage) -> None:
    context = ssl.create_default_context()
    if server.tls:
        client: smtplib.SMTP = smtplib.SMTP_SSL(server.host, server.port, timeout=SMTP_TIMEOUT, context=context)
    else:
        client = smtplib.SMTP(server.host, server.port, timeout=SMTP_TIMEOUT)
    with client:
        client.ehlo()
        if not server.tls and client.has_extn("starttls"):
            client.starttls(context=context)
        if server.user:
            client.login(server.user, server.password or "")
        client.send_message(mail)
