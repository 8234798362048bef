"""OpenAPI description of the article endpoints (spec, GET /api/v1/articles; issue 4).

Kept beside ``server.articles`` so the handler module stays about behaviour; ``server.articles``
re-exports ``OPENAPI_PATHS`` and ``OPENAPI_SCHEMAS`` for the application's route-module contract.
"""

from __future__ import annotations

from typing import Any

from exporters.articles import CSV_COLUMNS, EXPANSIONS
from server.article_params import COUNT_STRATEGIES, FORMATS, MAX_OFFSET
from server.openapi_parts import csv_param, header, ok, operation, param
from store.query import ARTICLE_SORTS, TEXT_FIELDS, TIME_FIELDS
from store.records import CATEGORIES, INDUSTRY_TAGS, SEVERITY_LABELS

_S = {"type": "string"}
_SL = {"type": "array", "items": _S}
_DT = {"type": "string", "format": "date-time"}
_FLAG = {"type": "boolean"}

_PARAMS = [
    csv_param("source", "Exact source names (see /api/v1/sources), any-match."),
    param("source_type", {"type": "string", "enum": ["rss", "community"]}, "Source type."),
    csv_param("source_tier", "Source tiers 1-4.", ("1", "2", "3", "4")),
    csv_param("category", "Category slugs.", CATEGORIES),
    csv_param("content_type", "Content types (e.g. security, educational, news); all by default."),
    csv_param("tech_tags", "Technology tags, any-match."),
    csv_param("industry_tags", "Industry tags, any-match.", INDUSTRY_TAGS),
    csv_param("threat_actor", "Lowercase canonical actor names, any-match."),
    param("min_severity", {"type": "number", "minimum": 0, "maximum": 10},
          "Exclude articles scoring below. Exclusive with `severity` (both: 400 conflicting_parameters)."),
    csv_param("severity", "Severity buckets (critical 9-10, high 7-8.9, medium 4-6.9, low below 4).", SEVERITY_LABELS),
    param("has_iocs", _FLAG, "true/false/1/0."),
    param("cve_text_search", {"type": "string", "pattern": "^[Cc][Vv][Ee]-[0-9]{4}-[0-9]{4,7}$"},
          "Substring match on title and AI summary (a shorter id also matches a longer one)."),
    {**param("cve", {"type": "string"}, "Deprecated alias of cve_text_search; responses carry Deprecation "
             "and Sunset headers."), "deprecated": True},
    param("mitre_technique", {"type": "string", "pattern": "^T[0-9]{4}(\\.[0-9]{3})?$"}, "One ATT&CK technique id."),
    param("has_ai_summary", _FLAG, "true/false/1/0."),
    param("has_audio", _FLAG, "true/false/1/0."),
    param("is_archived", {"type": "boolean", "default": False}, "Include archived articles."),
    param("submission_type", {"type": "string", "enum": ["rss_auto", "user_submitted"]}, "Submission type."),
    param("q", _S, "Full-text query: every term must match (stemmed, case-insensitive); -term excludes. Only "
          "letters, digits, spaces, '.', ',' and '-' are kept; then at least 2 characters and one alphabetic word "
          "of 3+ letters, else 400 q_invalid."),
    param("q_field", {"type": "string", "enum": list(TEXT_FIELDS), "default": "default"},
          "default: title and summary through the full-text index; title, summary, ai_summary: word-prefix "
          "scans (slower)."),
    param("time_field", {"type": "string", "enum": list(TIME_FIELDS), "default": "published_at"},
          "The field since and until apply to."),
    param("since", _DT, "Lower bound; older than the tier lookback (Free 7 days, Pro 365) it is clamped and "
          "X-Tier-Lookback-Clamped is set."),
    param("until", _DT, "Upper bound; in the future: 400."),
    param("modified_since", _DT, "Alias for time_field=modified_at with since (delta polling)."),
    param("limit", {"type": "integer", "minimum": 1, "default": 50},
          "Page size; above the tier cap (Free 100; Pro 1,000, NDJSON/CSV 5,000) it is reduced, X-Limit-Capped."),
    param("offset", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0},
          f"Rows to skip; above {MAX_OFFSET}: 400 deep_paging_unsupported. Not combinable with cursor."),
    param("cursor", _S, "Opaque signed cursor from links.next or X-Next-Cursor; tied to the sort (another sort or a "
          "modified cursor: 400 invalid_cursor)."),
    param("format", {"type": "string", "enum": list(FORMATS), "default": "json"},
          "ndjson and csv need scope read:articles:export (Pro) and cost more (X-Format-Cost-Multiplier)."),
    csv_param("fields", "Sparse rows: only these fields (id always kept; unknown names dropped)."),
    csv_param("expand", "Additions to each row: mitre (always on), iocs, cves, threat_actors.", EXPANSIONS),
    param("sort", {"type": "string", "enum": list(ARTICLE_SORTS), "default": "published:desc"},
          "Sort; ties broken by id."),
    param("count_strategy", {"type": "string", "enum": list(COUNT_STRATEGIES), "default": "none"},
          "meta.total: none (null), planned (a fast lower-bound estimate, at most 10,000), exact."),
]

_LIST_HEADERS = {
    "X-Next-Cursor": header("Cursor of the next page; absent on the last page"),
    "X-Tier-Lookback-Days": header("Effective lookback in days", "integer"),
    "X-Tier-Lookback-Clamped": header("true when since was clamped", "boolean"),
    "X-Limit-Capped": header("true when limit exceeded the tier cap", "boolean"),
    "X-Format-Cost-Multiplier": header("Rate-limit cost of the request (json 1, ndjson/csv 5)", "integer"),
    "Deprecation": header("Set when the deprecated cve parameter was used (RFC 9745)"),
    "Sunset": header("Removal date of the deprecated cve parameter (RFC 8594)"),
}

OPENAPI_SCHEMAS: dict[str, Any] = {
    "Article": {"type": "object", "description": "List form: every field top-level. CSV: arrays and objects are "
                "JSON in their cell, booleans true/false, absent values empty.", "required": ["id"], "properties": {
        **{n: _S for n in ("id", "title", "url", "canonical_url", "summary", "ai_summary", "source_name",
                           "source_type", "category", "category_label", "category_legacy", "content_type",
                           "severity_label", "categorized_by", "ai_classification", "submission_type")},
        # Spec: "string or null" / "number or null"; an article may have no image or classification time.
        **{n: {**_S, "nullable": True} for n in ("image_url", "audio_voice", "submitted_by_username",
                                                 "audio_url")},
        **{n: _DT for n in ("published_at", "fetched_at", "modified_at", "created_at")},
        "categorized_at": {**_DT, "nullable": True},
        **{n: {"type": "integer"} for n in ("source_tier", "ioc_count", "score", "upvotes", "downvotes",
                                            "comment_count", "vouch_count")},
        **{n: {"type": "number"} for n in ("severity_score", "ai_classification_confidence", "rank_score")},
        "audio_duration_seconds": {"type": "number", "nullable": True},
        **{n: _SL for n in ("tech_tags", "industry_tags", "threat_actors", "cve_ids")},
        "has_iocs": _FLAG, "is_archived": _FLAG,
        "mitre_techniques": {"type": "array", "items": {"type": "object", "properties": {
            "id": _S, "name": _S, "tactic": _S, "confidence": _S}}},
        "iocs": {"type": "array", "description": "expand=iocs", "items": {"type": "object", "properties": {
            "type": _S, "value": _S, "confidence": _S}}},
        "cves": {"type": "array", "description": "expand=cves", "items": {"type": "object", "properties": {
            "id": _S, "url": {"type": "string", "description": "NVD page"}}}},
        "threat_actor_details": {"type": "array", "description": "expand=threat_actors", "items": {
            "type": "object", "properties": {"name": _S, "techniques": _SL}}},
    }},
    "ArticleList": {"type": "object", "required": ["meta", "data", "links"], "properties": {
        "meta": {"type": "object", "properties": {
            "limit": {"type": "integer"}, "offset": {"type": "integer"}, "total": {"type": "integer", "nullable": True},
            "total_estimated": _FLAG, "generated_at": _DT, "feed_version": _S,
            "source": {"type": "string", "description": "the database that answered (sqlite or mongodb)"},
            "filters": {"type": "object", "description": "the applied filters; lists as lists"}}},
        "data": {"type": "array", "items": {"$ref": "#/components/schemas/Article"}},
        "links": {"type": "object", "properties": {"self": _S, "next": _S}},
    }},
    "ArticleSingle": {"type": "object", "properties": {
        "id": _S, "title": _S, "url": _S, "source": {"type": "string", "description": "publisher domain"},
        "published_at": _DT, "summary": _S, "categories": _SL, "severity": {"type": "string", "enum": list(
            SEVERITY_LABELS)}, "tags": _SL, "cves": _SL, "threat_actors": _SL, "points": {"type": "integer"},
        "comment_count": {"type": "integer"},
        "iocs": {"type": "array", "items": {"type": "object", "properties": {"type": _S, "value": _S}}},
        "mitre_techniques": {"type": "array", "items": {"type": "object", "properties": {"id": _S, "name": _S}}},
    }},
    "SourceList": {"type": "object", "properties": {"meta": {"type": "object"}, "data": {"type": "array", "items": {
        "type": "object", "properties": {
            "name": _S, "source_type": _S, "source_tier": {"type": "integer"}, "category": _S, "homepage": _S,
            "feed_url": _S, "enabled": _FLAG, "article_count": {"type": "integer"},
            "health": {"type": "object", "properties": {
                "last_attempt_at": {**_DT, "nullable": True}, "last_success_at": {**_DT, "nullable": True},
                "last_error": {"type": "string", "nullable": True}, "items_seen": {"type": "integer"}}}}}}}},
}

OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/articles": operation(
        "articles", "List, filter, search, poll and export articles",
        "Scope read:articles (json) or read:articles:export (ndjson, csv; Pro). Streamed in chunks. CSV columns: "
        + ", ".join(CSV_COLUMNS) + ". Delta polling: time_field=modified_at, modified_since, sort=modified:desc.",
        _PARAMS,
        {"200": ok("A page of articles", {"application/json": {"$ref": "#/components/schemas/ArticleList"},
                                          "application/x-ndjson": {"type": "string"}, "text/csv": {"type": "string"}},
                   _LIST_HEADERS)}),
    "/api/v1/articles/{id}": operation(
        "articles", "Read one article", "Scope read:articles. Single-read form. Unknown, malformed or outside the "
        "tier's lookback: 404 not_found.",
        [param("id", {"type": "string", "format": "uuid"}, "Article id.", where="path")],
        {"200": ok("The article", {"application/json": {"$ref": "#/components/schemas/ArticleSingle"}}),
         "404": {"$ref": "#/components/responses/NotFound"}}),
    "/api/v1/sources": operation(
        "articles", "List sources", "Scope read:articles. Exact names for the source filter, with type, tier, "
        "article count and collection health.", [],
        {"200": ok("Sources", {"application/json": {"$ref": "#/components/schemas/SourceList"}})}),
}
