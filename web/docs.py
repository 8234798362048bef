"""``/api/docs``: Swagger UI on ``/api/openapi.json``, served from the pinned ``swagger-ui-bundle`` package.

Nothing is fetched from a CDN. The initialiser is a static file (``web/static/docs.js``), not an inline
script, so the pages' Content-Security-Policy holds here too. A person pastes a key in "Authorize" and
tries every operation; the key stays in the browser's memory (Swagger UI does not persist it).
"""

from __future__ import annotations

from pathlib import Path

import swagger_ui_bundle

from web.base import PageHandler

SWAGGER_UI = Path(swagger_ui_bundle.swagger_ui_path)


class DocsHandler(PageHandler):
    """The viewer page; open to everyone, like the description it shows."""

    needs_user = False

    def get(self) -> None:
        self.page("docs.html")
