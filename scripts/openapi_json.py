"""Print the OpenAPI document of citewall's HTTP API, as `GET /openapi.json` serves it.

The document depends only on the routes and their schemas, so the app is assembled over a
runtime with nothing loaded (no database, no models): it can describe requests, not serve them.
`scripts/gen-types` turns the output into `web/src/api/types.ts`.

    python scripts/openapi_json.py > openapi.json
"""

from __future__ import annotations

import json
import sys
import tempfile
from typing import Any, cast

from citewall.api.app import create_app
from citewall.config import load_settings
from citewall.runtime import Runtime


def openapi_document() -> dict[str, Any]:
    """The app's OpenAPI document (``create_app(...).openapi()``)."""
    with tempfile.TemporaryDirectory() as data_dir:
        absent = cast(Any, None)
        runtime = Runtime(
            settings=load_settings(data_dir=data_dir),
            engine=absent,
            session_factory=absent,
            embedder=absent,
            retriever=absent,
            generator=absent,
            condenser=absent,
            thresholds=None,
        )
        return create_app(runtime).openapi()


if __name__ == "__main__":
    json.dump(openapi_document(), sys.stdout, indent=2)
    sys.stdout.write("\n")
