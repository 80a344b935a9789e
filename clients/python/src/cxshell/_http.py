"""The inspector's JSON API over HTTP/1.1 (the standard library's http.client)."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from typing import Any, Iterator, Optional, Tuple

from ._errors import WorldError


class Inspector:
    """Requests to one world's inspector: JSON in, JSON out, errors as WorldError."""

    def __init__(self, url: str, token: Optional[str] = None) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname or not parsed.port:
            raise ValueError(f"the world's URL must be http://HOST:PORT, not {url!r}")
        self.url = f"http://{parsed.netloc}"
        self.host = parsed.hostname
        self.port = parsed.port
        self.token = token

    def headers(self, json_body: bool) -> dict:
        headers = {"accept": "application/json"}
        if json_body:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        return headers

    def call(self, method: str, path: str, body: Any = None, query: Optional[dict] = None,
             timeout: float = 60.0) -> Any:
        """The answer's JSON (None for 204); WorldError for a status of 400 or more."""
        if query:
            path += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None if body is None else json.dumps(body).encode()
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            connection.request(method, path, body=data, headers=self.headers(method != "GET"))
            response = connection.getresponse()
            text = response.read()
        except OSError as error:
            raise WorldError(0, f"the world at {self.url} cannot be reached: {error}") from error
        finally:
            connection.close()
        value = json.loads(text) if text else None
        if response.status >= 400:
            sentence = value.get("error") if isinstance(value, dict) else None
            raise WorldError(response.status, sentence or f"{method} {path} answered {response.status}")
        return value

    def events(self, query: dict, last_event_id: Optional[int]) -> Iterator[Tuple[int, dict]]:
        """One connection to the log's stream: (seq, entry) as they come, until it ends."""
        path = "/api/v1/stream"
        if query:
            path += "?" + urllib.parse.urlencode(query)
        headers = self.headers(False)
        headers["accept"] = "text/event-stream"
        if last_event_id is not None:
            headers["last-event-id"] = str(last_event_id)
        connection = http.client.HTTPConnection(self.host, self.port, timeout=None)
        try:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            if response.status >= 400:
                value = json.loads(response.read() or b"{}")
                raise WorldError(response.status, value.get("error", f"the stream answered {response.status}"))
            seq: Optional[int] = None
            data: list = []
            while True:
                line = response.readline()
                if not line:
                    return
                line = line.decode().rstrip("\r\n")
                if line.startswith("id: "):
                    seq = int(line[4:])
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data:
                    entry = json.loads("\n".join(data))
                    data = []
                    if seq is not None and "seq" in entry:
                        yield seq, entry
        finally:
            connection.close()
