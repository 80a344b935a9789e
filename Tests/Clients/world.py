"""What the real-client checks share: a running `cxshell serve` driven through its
standard input, the environment a backend reaches the world with, and the loop that
runs checks and prints their totals."""

import json
import os
import subprocess
import tempfile
import threading
import traceback

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHELL = os.path.join(ROOT, ".build", "debug", "cxshell")


class Shell:
    """A running shell: requests in on standard input, every output line kept."""

    def __init__(self, work, *arguments):
        self.process = subprocess.Popen(
            [SHELL, "serve", "--listen", "127.0.0.1:0", "--ca-dir", os.path.join(work, "ca"), *arguments],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        first = json.loads(self.process.stdout.readline())
        self.port = int(first["listening"]["address"].rsplit(":", 1)[1])
        self.ca = first["listening"]["ca"]
        self.lines = []
        self.replies = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(json.loads(line))
                self.changed.notify_all()

    def send(self, request):
        """One request line; its reply."""
        with self.changed:
            seen = sum(1 for line in self.lines if "reply" in line)
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        with self.changed:
            assert self.changed.wait_for(lambda: sum(1 for line in self.lines if "reply" in line) > seen, 30)
            return [line for line in self.lines if "reply" in line][seen]

    def _lines(self, keep, at_least):
        # The shell writes a request's lines before its answer goes out, but this reader
        # may take them after the client has its answer: wait for as many as expected.
        with self.changed:
            self.changed.wait_for(lambda: sum(1 for line in self.lines if keep(line)) >= at_least, 30)
            return [line for line in self.lines if keep(line)]

    def reports(self, network, at_least=0):
        """The report lines of `network`, once there are at least `at_least` of them."""
        return self._lines(lambda line: line.get("network") == network, at_least)

    def deliveries(self, at_least=0):
        return self._lines(lambda line: "delivery" in line, at_least)

    def device(self, platform):
        """A device whose app registered and subscribed to push events; its token."""
        self.send({"op": "device", "platform": platform})
        self.send({"op": "launch"})
        reply = self.send({"op": "call", "plugin": "push", "method": "register", "input": ""})
        self.send({"op": "subscribe", "key": "push", "plugin": "push", "stream": "events", "input": ""})
        return json.loads(reply["output"])["token"]

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


class Proxied:
    """The environment a backend is started with to reach the world: HTTPS_PROXY (unless
    `proxy` is false: the backend names the front door's address itself) and the test CA;
    put back as it was afterwards."""

    def __init__(self, shell, proxy=True):
        self.settings = {"HTTPS_PROXY": f"http://127.0.0.1:{shell.port}" if proxy else "",
                         "REQUESTS_CA_BUNDLE": shell.ca, "SSL_CERT_FILE": shell.ca}

    def __enter__(self):
        self.saved = {name: os.environ.get(name) for name in self.settings}
        os.environ.update(self.settings)

    def __exit__(self, *_):
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_checks(checks, label="clients"):
    """Runs each check in its own temporary directory; prints one line per check and
    the totals as `Clients: N passed, M failed` (what Tests/run-all adds up)."""
    passed = failed = 0
    for check in checks:
        with tempfile.TemporaryDirectory() as work:
            try:
                check(work)
                passed += 1
                print(f"{label}: {check.__name__} passed")
            except Exception:
                failed += 1
                print(f"{label}: {check.__name__} FAILED")
                traceback.print_exc()
    print(f"Clients: {passed} passed, {failed} failed")
    return 1 if failed else 0


class Broker:
    """A real mosquitto on a free loopback port; with `admin`, its dynamic-security
    plugin on (made with `mosquitto_ctrl dynsec init`), administered by admin/admin-secret."""

    def __init__(self, work, admin=True):
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.endpoint = f"mqtt://127.0.0.1:{self.port}"
        self.admin = {"username": "admin", "password": "admin-secret"} if admin else None
        settings = [f"listener {self.port} 127.0.0.1", f"allow_anonymous {'false' if admin else 'true'}",
                    "persistence false"]
        if admin:
            # mosquitto started as root reads its files as the `mosquitto` user.
            os.chmod(work, 0o755)
            security = os.path.join(work, "dynamic-security.json")
            subprocess.run(["mosquitto_ctrl", "dynsec", "init", security, "admin", "admin-secret"], check=True,
                           capture_output=True)
            plugin = next(path for path in
                          ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
                          if os.path.exists(os.path.join(path, "mosquitto_dynamic_security.so")))
            settings += [f"plugin {plugin}/mosquitto_dynamic_security.so", f"plugin_opt_config_file {security}"]
        configuration = os.path.join(work, "mosquitto.conf")
        with open(configuration, "w") as out:
            out.write("\n".join(settings) + "\n")
        mosquitto = next(path for path in ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"] if os.path.exists(path))
        self.process = subprocess.Popen([mosquitto, "-c", configuration], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        import socket
        import time
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.01)
        raise RuntimeError("mosquitto did not start listening")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
