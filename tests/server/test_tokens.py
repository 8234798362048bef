"""Signed paging tokens: intact tokens round-trip; tampered, foreign or malformed ones are refused."""

from __future__ import annotations

import pytest

from server.tokens import InvalidToken, sign, verify


def test_a_token_round_trips_for_its_kind() -> None:
    token = sign("s3cret", "cursor:published:desc", {"at": "2026-01-01T00:00:00Z", "id": "x"})
    assert verify("s3cret", "cursor:published:desc", token) == {"at": "2026-01-01T00:00:00Z", "id": "x"}


@pytest.mark.parametrize("size", range(12))
def test_a_token_of_any_length_round_trips(size: int) -> None:
    """The body's base64 padding is stripped (RFC 4648 section 5): every length of body, whatever its
    remainder modulo 4, is read back whole."""
    payload = {"id": "x" * size}
    token = sign("s3cret", "k", payload)
    assert "=" not in token
    assert verify("s3cret", "k", token) == payload


@pytest.mark.parametrize("mutate", [
    lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),
    lambda t: ("A" if t[0] != "A" else "B") + t[1:],
    lambda t: t.replace(".", ""),
    lambda t: t + "é",
    lambda t: "",
    lambda t: "!!!.???",
])
def test_tampered_tokens_are_refused(mutate) -> None:
    token = sign("s3cret", "k", {"n": 1})
    with pytest.raises(InvalidToken):
        verify("s3cret", "k", mutate(token))


def test_a_token_is_tied_to_its_kind_and_secret() -> None:
    token = sign("s3cret", "cursor:published:desc", {"n": 1})
    with pytest.raises(InvalidToken):
        verify("s3cret", "cursor:modified:desc", token)
    with pytest.raises(InvalidToken):
        verify("other", "cursor:published:desc", token)
