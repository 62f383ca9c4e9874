"""Print the model a judge server serves, or exit 1 when none answers at the URL.

scripts/demo.sh runs this with the Python that creates .venv, before anything is installed, to
decide whether the demo needs a judge of its own: the standard library only. A URL may end in
/v1; its credentials (http://user:password@host) go as Basic auth, as the judge client sends them.

    python scripts/served_model.py http://127.0.0.1:8888
"""

import base64
import json
import sys
import urllib.parse
import urllib.request


def served_model(url: str, timeout: float = 5.0) -> str | None:
    """The first model ``url``'s /v1/models lists when its /health answers 200, else None."""
    parts = urllib.parse.urlsplit(url.rstrip("/").removesuffix("/v1"))
    headers = {}
    if parts.username is not None:
        login = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(login.encode()).decode()
        parts = parts._replace(netloc=parts.netloc.rpartition("@")[2])
    root = parts.geturl()

    def get(path: str) -> bytes:
        request = urllib.request.Request(root + path, headers=headers)
        with urllib.request.urlopen(request, timeout=timeout) as reply:  # an HTTPError unless 2xx
            return bytes(reply.read())

    try:
        get("/health")  # vLLM's answers 200 with no body
        return str(json.loads(get("/v1/models"))["data"][0]["id"])
    except (OSError, ValueError, LookupError):  # URLError and timeouts are OSErrors; bad JSON, no model
        return None


if __name__ == "__main__":
    model = served_model(sys.argv[1])
    if model is None:
        sys.exit(1)
    print(model)
