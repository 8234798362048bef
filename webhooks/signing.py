"""The delivery signature: ``X-Ctiwire-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "t.body">``.

The time is inside the signed text, so a receiver that rejects old times (five minutes, say) is safe
from a replayed delivery; the scheme is Stripe's, which many receivers already know how to check.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SIGNATURE_HEADER = "X-Ctiwire-Signature"
EVENT_ID_HEADER = "X-Ctiwire-Event-Id"
SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_hex(32)


def signature(secret: str, body: bytes, timestamp: int) -> str:
    """The header value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def verify(secret: str, body: bytes, header: str) -> bool:
    """Whether ``header`` signs ``body`` with ``secret`` (the README's recipe, in the product's words)."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if not fields.get("t", "").isdigit() or "v1" not in fields:
        return False
    return hmac.compare_digest(signature(secret, body, int(fields["t"])), f"t={fields['t']},v1={fields['v1']}")
