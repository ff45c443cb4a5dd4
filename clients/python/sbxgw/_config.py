"""Where the gateway is and which key to use: arguments, else the environment."""
from __future__ import annotations

import os
from typing import Dict, Optional, Tuple
from urllib.parse import quote, urlencode

URL_VAR = "SANDBOX_URL"
KEY_VAR = "SANDBOX_API_KEY"


def resolve(url: Optional[str], api_key: Optional[str]) -> Tuple[str, str]:
    url = url or os.environ.get(URL_VAR)
    api_key = api_key or os.environ.get(KEY_VAR)
    if not url:
        raise ValueError(f"no gateway URL: pass url= or set {URL_VAR}")
    if not api_key:
        raise ValueError(f"no API key: pass api_key= or set {KEY_VAR}")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"the gateway URL must start with http:// or https://, not {url!r}")
    return url.rstrip("/"), api_key


def sandbox_path(sid: str, rest: str = "") -> str:
    return f"/v1/sandboxes/{quote(sid, safe='')}{rest}"


def command_path(sid: str, cid: str, rest: str = "") -> str:
    return sandbox_path(sid, f"/commands/{quote(cid, safe='')}{rest}")


def snapshot_path(snapshot_id: str) -> str:
    return f"/v1/snapshots/{quote(snapshot_id, safe='')}"


def image_path(name: str) -> str:
    return f"/v1/images/{quote(name, safe='')}"


def ws_url(base: str, path: str, params: Dict[str, object]) -> str:
    q = urlencode({k: str(v) for k, v in params.items() if v is not None})
    return "ws" + base[4:] + path + (f"?{q}" if q else "")
