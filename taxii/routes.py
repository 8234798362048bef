"""Mounts the TAXII 2.1 server (listed in ``application.app.ROUTE_MODULES``) and documents it.

Paths end with ``/`` as TAXII 2.1 writes them; the slash is optional here. Anything else under the
TAXII prefixes answers a TAXII 404 rather than the API's envelope.
"""

from __future__ import annotations

from typing import Any

from config.tiers import TIERS
from server.context import AppContext
from server.ioc_params import INCLUDE_WARNINGLISTED_PARAM, MIN_SCORE_PARAM, STATUS_PARAM
from server.openapi_parts import DATE_TIME_PARAM, SECURITY_WITH_BASIC, header, limit_param, list_pattern, param
from taxii.collections import COLLECTIONS, CONTEXT
from taxii.filters import (
    DEFAULT_PAGE,
    ID_PATTERN,
    MAX_PAGE,
    SPEC_VERSION_PATTERN,
    TYPE_PATTERN,
    VERSION_PATTERN,
)
from taxii.handlers import (
    ApiRootHandler,
    CollectionHandler,
    CollectionsHandler,
    DiscoveryHandler,
    StatusHandler,
    TaxiiNotFoundHandler,
)
from taxii.media import STIX_21, TAXII_21
from taxii.objects import ManifestHandler, ObjectHandler, ObjectsHandler, VersionsHandler

ROOT = r"/api/taxii2/api"
_COLLECTION = ROOT + r"/collections/([^/]+)"
_OBJECT = _COLLECTION + r"/objects/([^/]+)"


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    args = {"ctx": ctx}
    return [
        (r"/api/taxii2/?", DiscoveryHandler, args),
        (r"/taxii2/?", DiscoveryHandler, args),
        (ROOT + r"/?", ApiRootHandler, args),
        (ROOT + r"/status/([^/]+)/?", StatusHandler, args),
        (ROOT + r"/collections/?", CollectionsHandler, args),
        (_COLLECTION + r"/?", CollectionHandler, args),
        (_COLLECTION + r"/objects/?", ObjectsHandler, args),
        (_OBJECT + r"/?", ObjectHandler, args),
        (_OBJECT + r"/versions/?", VersionsHandler, args),
        (_COLLECTION + r"/manifest/?", ManifestHandler, args),
        (r"/(?:api/)?taxii2/.*", TaxiiNotFoundHandler, args),
    ]


# -- OpenAPI -----------------------------------------------------------------------------------
_ERRORS = {
    "400": "Malformed filter, unsupported match field, an empty or blank value, a control character, "
           "`added_after`, `limit` or `next` given twice, or a tampered/mismatched next (error_code invalid_next)",
    "401": "No key, a bad key or malformed Basic credentials; WWW-Authenticate names Bearer and Basic",
    "403": "Free key, or a key without scope read:taxii",
    "404": "Unknown collection, object, status or path",
    "406": "not_acceptable: the Accept header excludes " + TAXII_21 + " (TAXII 2.1 section 1.6.8): no media "
           "range admits it (e.g. only application/xml or application/taxii+json;version=2.0), or the most "
           "specific one that does has q=0. `*/*`, `application/*`, `application/json` and no Accept are "
           "answered in TAXII 2.1 JSON",
    "429": "Rate limit exceeded; see Retry-After",
}
_DATE_HEADERS = {
    "X-TAXII-Date-Added-First": header("date_added of the first object (YYYY-MM-DDTHH:MM:SS.ssssssZ); "
                                       "absent on an empty page"),
    "X-TAXII-Date-Added-Last": header("date_added of the last object; pass it as added_after on the next poll "
                                      "(absent on an empty page: keep the added_after you sent)"),
    "X-Cache": header("hit when the encoded page came from the cache (exact for the current data version)"),
    "ETag": header("Identifies the page body; If-None-Match answers 304"),
}
_PAGING = [
    param("added_after", DATE_TIME_PARAM,
          f"Only objects whose date_added (of their current version) is after this time; the IOC collections "
          f"then serve every status, revoked and expired objects included. Clamped to the tier's IOC lookback "
          f"({', '.join(f'{t.name.capitalize()} {t.ioc_lookback_days:,} days' for t in TIERS.values() if t.taxii)})."),
    limit_param(f"Objects per page; the server maximum is {MAX_PAGE:,} (Pro) and larger values are reduced.",
                DEFAULT_PAGE),
    param("next", {"type": "string"}, "Opaque token from the previous page's `next`; the filters may be "
          "repeated (they must then be the same) or omitted."),
    *(record | {"description": f"{text} Not a TAXII filter: send it with every page of a walk (the `next` token "
                "does not carry it)."} for record, text in (
        (STATUS_PARAM, "Lifecycle statuses of the IOC records, comma-separated (README, \"Indicator score and "
                       "lifecycle\"). Default `active`; with `added_after` or `match[version]` every status, "
                       "revoked objects with `revoked: true`. A saved feed's collection keeps its feed's statuses."),
        (MIN_SCORE_PARAM, MIN_SCORE_PARAM["description"] + " A saved feed's collection keeps its feed's."),
        (INCLUDE_WARNINGLISTED_PARAM, INCLUDE_WARNINGLISTED_PARAM["description"]),
    )),
]
# Each filter's pattern is the one taxii.filters checks its values against (a value that does not match: 400
# naming the parameter), as a comma-separated list.
_MATCH = {name: param(f"match[{name}]", {"type": "string", "pattern": list_pattern(one)}, text)
          for name, (one, text) in {
    "id": (ID_PATTERN, "STIX ids, comma-separated (ORed): a type, `--` and a lower-case UUID (STIX 2.1 "
                       "section 2.9)."),
    "type": (TYPE_PATTERN, "STIX types, comma-separated: indicator, vulnerability, attack-pattern, and in the "
                           "context collection identity, marking-definition, report, intrusion-set, malware, "
                           "threat-actor and "
                           "relationship (STIX 2.1 section 2.7 names: lower-case letters, digits and hyphens)."),
    "version": (VERSION_PATTERN, "first, last, all (any letter case), or RFC 3339 modified timestamps with a "
                                 "time zone (a marking definition's created); each object has one version."),
    "spec_version": (SPEC_VERSION_PATTERN, "STIX versions such as 2.1, comma-separated; only 2.1 is served."),
}.items()}
for _match in _MATCH.values():  # the one kind of parameter that may be repeated (taxii.filters)
    _match["description"] += " The parameter may also be repeated; all its values are ORed."
_COLLECTION_ID = param("id", {"type": "string"}, f"Collection id: {', '.join(c.id for c in COLLECTIONS)}, or "
                       "the id of one of your saved feeds (/api/v1/feeds).", where="path")
_OBJECT_ID = param("object_id", {"type": "string"}, "STIX object id.", where="path")


def _op(summary: str, description: str, schema: str, parameters: list[dict[str, Any]],
        dated: bool = False) -> dict[str, Any]:
    content = {TAXII_21: {"schema": {"$ref": f"#/components/schemas/{schema}"}}}
    ok = {"description": summary, "content": content, "headers": _DATE_HEADERS if dated else {}}
    errors = {code: {"description": text, "content": {TAXII_21: {
        "schema": {"$ref": "#/components/schemas/TaxiiError"}}}} for code, text in _ERRORS.items()}
    return {"get": {"tags": ["taxii"], "summary": summary, "description": description + " Pro plan, scope "
                    "read:taxii; the key as Bearer, or as the password of HTTP Basic (any user name). Answers "
                    "are `" + TAXII_21 + "`.", "parameters": parameters, "security": SECURITY_WITH_BASIC,
                    "responses": {"200": ok, **errors}}}


_CONTEXT_DESC = (f"`{CONTEXT}` holds what the IOC collections' objects refer to and what surrounds them: the "
                 "ctiwire identity (`created_by_ref`) and the TLP:CLEAR marking definition (`object_marking_refs`), "
                 "each added when it was created (a marking definition's version is its `created`), then a "
                 "`report` per article that brought indicators (`object_refs`: its indicators, vulnerabilities, "
                 "attack patterns and intrusion sets; `published` the article's date, its URL and ctiwire id in "
                 "`external_references`), an `intrusion-set` per threat actor (MISP galaxy name and aliases), a "
                 "`malware` per family the galaxy says an actor runs, a `threat-actor` (`nation-state`) per state "
                 "the galaxy names as an actor's suspected sponsor, and `relationship` objects (indicator "
                 "`indicates` intrusion-set; intrusion-set `uses` malware and attack-pattern, `targets` "
                 "vulnerability, `attributed-to` threat-actor). Each version is added when ctiwire stored it: a "
                 "report whose article changed "
                 "is added again with a later `modified`, so polling with `added_after` set to the last "
                 "`X-TAXII-Date-Added-Last` receives new and changed objects, none twice. Poll it beside "
                 "`all-iocs`: their union resolves every reference within the tier lookback (beside a narrower "
                 "collection or a saved feed, some name objects that collection leaves out). The tier lookback "
                 "does not limit it; `added_after`, `match[...]`, `limit` and `next` work as elsewhere.")
_OBJECTS_DESC = ("Ascending date_added order. In the IOC collections an object's date_added is that of its "
                 "current version, the same time as its `modified`: its last change (a re-report that changes "
                 "it), its revocation (`revoked: true`), or its `valid_until` once that has passed; so a poll "
                 "with `added_after` set to the last `X-TAXII-Date-Added-Last` receives each revocation, expiry "
                 "and change as a new version. `more` is true exactly when `next` is given. Filters on ids or "
                 "version timestamps scan a bounded number of records per page, so a page may hold fewer "
                 "objects than `limit` (even none) while `more` is true.")
OPENAPI_PATHS: dict[str, Any] = {
    "/api/taxii2/": _op("TAXII discovery", "Server discovery (also at /taxii2/).", "TaxiiDiscovery", []),
    "/api/taxii2/api/": _op("TAXII API root", "The one API root.", "TaxiiApiRoot", []),
    "/api/taxii2/api/collections/": _op("TAXII collections", "Every collection, in a fixed order, then your "
                                        "account's saved feeds (each a collection of its IOC records). "
                                        + _CONTEXT_DESC, "TaxiiCollections", []),
    "/api/taxii2/api/collections/{id}/": _op("TAXII collection", "One collection.", "TaxiiCollection",
                                             [_COLLECTION_ID]),
    "/api/taxii2/api/collections/{id}/objects/": _op(
        "TAXII objects", "STIX 2.1 indicators (vulnerabilities for CVEs, attack patterns for ATT&CK "
        "techniques). " + _CONTEXT_DESC + " " + _OBJECTS_DESC, "TaxiiEnvelope",
        [_COLLECTION_ID, *_PAGING, *_MATCH.values()], dated=True),
    "/api/taxii2/api/collections/{id}/manifest/": _op(
        "TAXII manifest", "Manifest records of the objects the same filters select. " + _OBJECTS_DESC,
        "TaxiiManifest", [_COLLECTION_ID, *_PAGING, *_MATCH.values()], dated=True),
    "/api/taxii2/api/collections/{id}/objects/{object_id}/": _op(
        "TAXII object", "One object by id.", "TaxiiEnvelope",
        [_COLLECTION_ID, _OBJECT_ID, *_PAGING, _MATCH["version"], _MATCH["spec_version"]], dated=True),
    "/api/taxii2/api/collections/{id}/objects/{object_id}/versions/": _op(
        "TAXII object versions", "The versions (modified timestamps) of one object.", "TaxiiVersions",
        [_COLLECTION_ID, _OBJECT_ID, *_PAGING, _MATCH["spec_version"]], dated=True),
}

_STR = {"type": "string"}
OPENAPI_SCHEMAS: dict[str, Any] = {
    "TaxiiError": {"type": "object", "required": ["title", "http_status"], "properties": {
        "title": _STR, "description": _STR, "error_id": _STR, "error_code": _STR,
        "http_status": {"type": "string", "description": "The HTTP status, as a string"},
        "details": {"type": "object", "additionalProperties": True,
                    "description": "request_id, and e.g. parameter or required_scope"}}},
    "TaxiiDiscovery": {"type": "object", "required": ["title"], "properties": {
        "title": _STR, "description": _STR, "default": _STR, "api_roots": {"type": "array", "items": _STR}}},
    "TaxiiApiRoot": {"type": "object", "required": ["title", "versions", "max_content_length"], "properties": {
        "title": _STR, "description": _STR, "versions": {"type": "array", "items": _STR},
        "max_content_length": {"type": "integer", "description": "0: read-only, no request bodies"}}},
    "TaxiiCollection": {"type": "object", "required": ["id", "title", "can_read", "can_write"], "properties": {
        "id": _STR, "title": _STR, "description": _STR, "can_read": {"type": "boolean"},
        "can_write": {"type": "boolean"},
        "media_types": {"type": "array", "items": {"type": "string", "enum": [STIX_21]}}}},
    "TaxiiCollections": {"type": "object", "properties": {
        "collections": {"type": "array", "items": {"$ref": "#/components/schemas/TaxiiCollection"}}}},
    "TaxiiEnvelope": {"type": "object", "required": ["more"], "properties": {
        "more": {"type": "boolean"}, "next": _STR,
        "objects": {"type": "array", "items": {"type": "object", "additionalProperties": True}}}},
    "TaxiiManifest": {"type": "object", "required": ["more"], "properties": {
        "more": {"type": "boolean"}, "next": _STR, "objects": {"type": "array", "items": {
            "type": "object", "properties": {"id": _STR, "date_added": _STR, "version": _STR,
                                             "media_type": _STR}}}}},
    "TaxiiVersions": {"type": "object", "required": ["more"], "properties": {
        "more": {"type": "boolean"}, "next": _STR, "versions": {"type": "array", "items": _STR}}},
}
