"""The API's error tree; every error leaves the server as the spec's envelope (spec, Errors).

Tree::

    ApiError                        status + code + message + details
    ├── AuthError          401      missing_api_key, invalid_api_key, expired_api_key
    ├── ScopeError         403      insufficient_scope (details: required_scope, your_scopes, upgrade_url)
    ├── RateLimited        429      rate_limit_exceeded (details: limit, reset_at, tier, upgrade_url)
    ├── BadRequest         400      invalid_parameter, q_invalid, invalid_cursor, deep_paging_unsupported, ...
    ├── NotFoundError      404      not_found
    ├── PayloadTooLarge    413      payload_too_large
    ├── ConflictError      409      name_taken (a saved feed's name is the account's already)
    ├── QuotaError         403      quota_exceeded (details: limit, tier, upgrade_url)
    └── Unavailable        503      service_unavailable
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error answered with the envelope ``{"error": {code, message, details?, request_id}}``."""

    status = 500
    code = "internal_error"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.code
        self.details = details
        self.headers = headers or {}


class UriTooLong(ApiError):
    status = 414
    code = "uri_too_long"


class HeadersTooLarge(ApiError):
    status = 431
    code = "headers_too_large"


class AuthError(ApiError):
    status = 401
    code = "invalid_api_key"


class ScopeError(ApiError):
    status = 403
    code = "insufficient_scope"


class RateLimited(ApiError):
    status = 429
    code = "rate_limit_exceeded"


class BadRequest(ApiError):
    status = 400
    code = "invalid_parameter"


class NotFoundError(ApiError):
    status = 404
    code = "not_found"


class PayloadTooLarge(ApiError):
    status = 413
    code = "payload_too_large"
class ConflictError(ApiError):
    status = 409
    code = "name_taken"


class QuotaError(ApiError):
    status = 403
    code = "quota_exceeded"


def plan_quota(message: str, limit: int, tier: str, upgrade_url: str) -> QuotaError:
    """403 quota_exceeded: the plan's ``limit`` of something is used up; the details say how to get more."""
    return QuotaError(message, details={"limit": limit, "tier": tier, "upgrade_url": upgrade_url})


class Unavailable(ApiError):
    status = 503
    code = "service_unavailable"


# Codes of the HTTP errors Tornado raises itself (unknown route, wrong method).
CODE_BY_STATUS: dict[int, str] = {
    400: "bad_request",
    401: "missing_api_key",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    429: "rate_limit_exceeded",
    503: "service_unavailable",
}


def bad_param(name: str, problem: str) -> BadRequest:
    """A 400 naming the parameter (malformed known parameters get a 400 naming it)."""
    return BadRequest(f"parameter {name!r}: {problem}", details={"parameter": name})
