"""A world of simulated phones, started here or already running, and what a test asks of it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ._errors import WorldError
from ._http import Inspector

#: The log filters `log`, `wait_for` and `stream` take, as the API names them.
FILTERS = ("device", "source", "status", "q")


@dataclass(frozen=True)
class Device:
    """A device the world made: its id (`d1`), its push token (None on the web), its platform."""

    id: str
    token: Optional[str]
    platform: str


class Devices:
    """The world's devices (`/api/v1/devices`)."""

    def __init__(self, world: "World") -> None:
        self._world = world

    def create(self, platform: str, count: int = 1, ready: bool = True, **options: Any) -> List[Device]:
        """Makes `count` devices (all or none); `ready`: launched, registered for pushes and
        subscribed to the push plugin's events. `options` are the `device` op's
        (`fcm_project`, `apns_environment`, `apns_team`, `bundle`, …)."""
        body = dict(options, platform=platform, count=count, ready=ready)
        made = self._world._api.call("POST", "/api/v1/devices", body)["devices"]
        tokens = {}
        if not ready and platform != "web":
            tokens = {entry["device"]: self.get(entry["device"]).get("token") for entry in made}
        return [Device(entry["device"], entry.get("token", tokens.get(entry["device"])), platform) for entry in made]

    def get(self, id: str) -> Dict[str, Any]:
        """The device as the API shows it: state, token, tray, topics, what its core received."""
        return self._world._api.call("GET", f"/api/v1/devices/{id}")

    def delete(self, id: str) -> None:
        """Uninstalls the app (its tokens retire) and takes the device out of the world."""
        self._world._api.call("DELETE", f"/api/v1/devices/{id}", {})

    def list(self, **filters: Any) -> List[Dict[str, Any]]:
        """Every device that matches `platform` and `state`, following the API's pages."""
        found: List[Dict[str, Any]] = []
        after = None
        while True:
            page = self._world._api.call("GET", "/api/v1/devices", query=dict(filters, limit=1000, after=after))
            found += page["devices"]
            after = page["next"]
            if after is None:
                return found


class Credentials:
    """Key files for SDKs that check signatures, made and registered by the world."""

    def __init__(self, world: "World") -> None:
        self._world = world

    def fcm_service_account(self, project: str) -> str:
        """The path of a service-account JSON for `project` (firebase-admin's
        `credentials.Certificate(path)` loads it); from now on assertions are checked."""
        account = self._world._api.call("POST", "/api/v1/credentials",
                                        {"format": "service_account", "project": project})
        path = os.path.join(self._world._files(), f"service-account-{project}-{account['private_key_id'][:8]}.json")
        with open(path, "w") as file:
            json.dump(account, file, indent=2)
        return path

    def apns_key(self, team: Optional[str] = None, key_id: Optional[str] = None) -> Tuple[str, str, str]:
        """`(key_id, team_id, p8_path)` of an APNs signing key the world registered."""
        request = {"format": "p8"}
        if team:
            request["team"] = team
        if key_id:
            request["key_id"] = key_id
        key = self._world._api.call("POST", "/api/v1/credentials", request)
        path = os.path.join(self._world._files(), f"AuthKey_{key['key_id']}.p8")
        with open(path, "w") as file:
            file.write(key["p8"])
        return key["key_id"], key["team_id"], path


class World:
    """One world: started by `World.start` (and stopped by `close`) or reached by
    `World.connect`. Every call raises `WorldError` when the world refuses, with its
    sentence word for word."""

    def __init__(self, url: str, token: Optional[str] = None,
                 process: Optional[subprocess.Popen] = None, directory: Optional[str] = None) -> None:
        self._api = Inspector(url, token)
        self._process = process
        self._directory = directory
        self._own_files: Optional[str] = None
        self.url = self._api.url
        self.devices = Devices(self)
        self.credentials = Credentials(self)
        summary = self._api.call("GET", "/api/v1/world")
        self.ca_path: Optional[str] = summary.get("ca")
        # wait_for matches what is logged from now on (and after each reset).
        self._mark = summary["log"]["next_seq"] - 1
        self._lock = threading.Lock()

    # MARK: starting and stopping

    @classmethod
    def start(cls, binary: Optional[str] = None, args: Sequence[str] = (),
              env: Optional[Dict[str, str]] = None) -> "World":
        """Starts `cxshell serve --listen 127.0.0.1:0 --keep-running` (the binary from
        `binary`, `$CXSHELL_BINARY`, or PATH) with its CA in a directory of its own."""
        path = binary or os.environ.get("CXSHELL_BINARY") or shutil.which("cxshell")
        if not path or not os.path.exists(path):
            raise WorldError(0, f"no cxshell binary: give binary=, set CXSHELL_BINARY, or put cxshell on PATH "
                                f"(looked for {path or 'cxshell'})")
        directory = tempfile.mkdtemp(prefix="cxshell-world-")
        environment = dict(os.environ if env is None else env)
        process = subprocess.Popen(
            [path, "serve", "--listen", "127.0.0.1:0", "--keep-running", "--ca-dir",
             os.path.join(directory, "ca"), *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
        assert process.stdout is not None
        first = b""
        while True:
            first = process.stdout.readline()
            if not first or first.startswith(b'{"listening"'):
                break
        if not first:
            errors = process.stderr.read().decode() if process.stderr else ""
            process.wait()
            shutil.rmtree(directory, ignore_errors=True)
            raise WorldError(0, errors.strip() or f"cxshell serve ended with status {process.returncode}")
        address = json.loads(first)["listening"]["address"]
        # Its output (deliveries, report lines) is read and dropped, so it never blocks on
        # a full pipe; the log and the API have all of it.
        threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
        try:
            return cls(f"http://{address}", process=process, directory=directory)
        except Exception:
            process.terminate()
            process.wait()
            raise

    @classmethod
    def connect(cls, url: str, token: Optional[str] = None) -> "World":
        """A world already running at `url` (`http://HOST:PORT`), with its API token if it has one."""
        return cls(url, token)

    def close(self) -> None:
        """Stops a world this started (SIGTERM: it stops its broker and exits 0) and
        removes its files; a connected world is left running."""
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        for directory in (self._directory, self._own_files):
            if directory:
                shutil.rmtree(directory, ignore_errors=True)
        self._directory = self._own_files = None

    def __enter__(self) -> "World":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _files(self) -> str:
        if self._directory:
            return self._directory
        if not self._own_files:
            self._own_files = tempfile.mkdtemp(prefix="cxshell-files-")
        return self._own_files

    # MARK: the world as a whole

    def proxy_env(self) -> Dict[str, str]:
        """The environment a backend reaches the world with: the proxy and the test CA,
        for Python (requests, httpx, google-auth), curl and Node."""
        proxy = self.url
        ca = self.ca_path or ""
        return {"HTTPS_PROXY": proxy, "https_proxy": proxy, "REQUESTS_CA_BUNDLE": ca, "SSL_CERT_FILE": ca,
                "NODE_EXTRA_CA_CERTS": ca}

    def reset(self, keep: Iterable[str] = ()) -> Dict[str, Any]:
        """The world as new but for the parts in `keep` (devices, credentials, chaos,
        appwrite, clock, log); what was cleared. `wait_for` matches from here on."""
        answer = self._api.call("POST", "/api/v1/reset", {"keep": list(keep)})
        with self._lock:
            self._mark = self._api.call("GET", "/api/v1/world")["log"]["next_seq"] - 1
        return answer

    def requests(self, op_or_list: Union[Dict[str, Any], List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
        """Line-protocol requests, applied in order: the lines standard output would carry."""
        return self._api.call("POST", "/api/v1/requests", op_or_list)["lines"]

    def summary(self) -> Dict[str, Any]:
        """`/api/v1/world`: version, address, devices, the log's size, counts."""
        return self._api.call("GET", "/api/v1/world")

    # MARK: the log

    def log(self, **filters: Any) -> List[Dict[str, Any]]:
        """Retained log entries, oldest first; filters `device`, `source`, `status`, `q`,
        and `after`, `limit`, `order` as the API takes them."""
        return self._api.call("GET", "/api/v1/log", query=filters)["entries"]

    def wait_for(self, timeout: float = 10.0, **filters: Any) -> Dict[str, Any]:
        """The first entry matching `filters` logged after the last `reset()` or the
        previous `wait_for` match, even one logged before this call: send, then wait,
        never races. TimeoutError names what was logged instead."""
        unknown = set(filters) - set(FILTERS)
        if unknown:
            raise TypeError(f"wait_for filters are {', '.join(FILTERS)}, not {', '.join(sorted(unknown))}")
        deadline = time.monotonic() + timeout
        with self._lock:
            mark = self._mark
        while True:
            left = deadline - time.monotonic()
            wait = max(0, min(30, int(left)))
            entries = self._api.call("GET", "/api/v1/log",
                                     query=dict(filters, after=mark, limit=1, wait=wait), timeout=wait + 30)
            if entries["entries"]:
                entry = entries["entries"][0]
                with self._lock:
                    self._mark = max(self._mark, entry["seq"])
                return entry
            if time.monotonic() >= deadline:
                seen = self._api.call("GET", "/api/v1/log", query={"after": mark, "limit": 20})["entries"]
                described = "; ".join(
                    f"{e['seq']} {e['source']} {e['status']}" + (f" {e['effect']}" if e.get("effect") else "")
                    for e in seen) or "nothing"
                raise TimeoutError(f"no log entry matched {filters} within {timeout} s; logged since: {described}")

    def stream(self, **filters: Any) -> Iterator[Dict[str, Any]]:
        """Entries as they are logged (the SSE stream), from now on; a dropped connection
        is resumed after the last entry seen. The iterator may be used from another thread."""
        query = {key: value for key, value in filters.items() if value is not None}
        last: Optional[int] = None
        while True:
            try:
                for seq, entry in self._api.events(query, last):
                    last = seq
                    yield entry
            except (OSError, ConnectionError):
                pass
            if self._process is not None and self._process.poll() is not None:
                return
            time.sleep(0.1)

    # MARK: faults and time

    @contextlib.contextmanager
    def chaos(self, rule: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
        """Adds a chaos rule for the block and removes it at its end (a rule that ran out
        its `count` is gone already, which is not an error); yields the rule as listed."""
        added = self._api.call("POST", "/api/v1/chaos", rule)["rule"]
        try:
            yield added
        finally:
            try:
                self._api.call("DELETE", f"/api/v1/chaos/{added['id']}", {})
            except WorldError as error:
                if error.status != 404:
                    raise

    def advance_clock(self, milliseconds: int) -> Dict[str, Any]:
        """Lets time pass at once on the world's clock (expiry, TTLs, JWTs)."""
        return self.requests({"op": "clock", "advance_ms": milliseconds})[-1]
