"""The README's verification recipe accepts the signature of a delivery and refuses a changed body, another
secret and an old time."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from webhooks.signing import new_secret, signature, verify

README = Path(__file__).resolve().parents[2] / "README.md"


def recipe() -> Any:
    block = next(
        b for b in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S) if "def verify(" in b
    )
    scope: dict[str, Any] = {}
    exec(block, scope)  # the README's own lines, as a reader would paste them
    return scope["verify"]


def test_the_recipe_checks_a_delivery() -> None:
    readme_verify, secret, body = recipe(), new_secret(), b'{"webhook_id":"x","events":[]}'
    header = signature(secret, body, int(time.time()))
    assert readme_verify(secret, body, header) and verify(secret, body, header)
    assert not readme_verify(secret, body + b" ", header) and not verify(secret, body + b" ", header)
    assert not readme_verify(new_secret(), body, header)
    assert not readme_verify(secret, body, signature(secret, body, int(time.time()) - 3600))
