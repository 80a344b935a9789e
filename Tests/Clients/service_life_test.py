"""The world as a service a backend's tests use (Docs/Install.md): firebase-admin loads
the service-account file the world hands out, signs with its key and delivers; a reset
forgets that account; the log exported as HAR is read by a HAR library (haralyzer), with
its secrets redacted. Prints one line of totals."""

import base64
import json
import time
import urllib.request

from world import Proxied, Shell, run_checks


def api(shell, method, path, body=None):
    request = urllib.request.Request(
        f"http://127.0.0.1:{shell.port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def firebase_admin_sends_with_the_worlds_service_account_and_a_reset_forgets_it(work):
    import firebase_admin
    from firebase_admin import credentials, messaging
    shell = Shell(work)
    try:
        token = shell.device("android")
        status, body = api(shell, "POST", "/api/v1/credentials", {"format": "service_account", "project": "cxshell"})
        assert status == 201, body
        path = f"{work}/service-account.json"
        with open(path, "wb") as file:
            file.write(body)
        # The registered key makes the world check every assertion's signature from now on:
        # only a client holding this file's private key gets a token.
        app = firebase_admin.initialize_app(credentials.Certificate(path), name=f"sa-{shell.port}")
        with Proxied(shell):
            name = messaging.send(messaging.Message(token=token, data={"k": "v"}), app=app)
        assert name.startswith("projects/cxshell/messages/"), name
        assert len(shell.deliveries(1)) == 1
        assert [report["status"] for report in shell.reports("oauth", 1)] == [200]

        status, body = api(shell, "POST", "/api/v1/reset", {"keep": ["devices"]})
        assert status == 200 and json.loads(body)["cleared"]["credentials"] >= 1, body
        # With another account registered, signatures are checked again: the file the
        # reset forgot names an account the world no longer knows.
        status, body = api(shell, "POST", "/api/v1/credentials", {"format": "service_account", "project": "cxshell"})
        assert status == 201, body
        app = firebase_admin.initialize_app(credentials.Certificate(path), name=f"stale-{shell.port}")
        try:
            with Proxied(shell):
                messaging.send(messaging.Message(token=token, data={"k": "v"}), app=app)
            raise AssertionError("a key the reset forgot still signed")
        except Exception as error:  # google-auth's RefreshError, from the token endpoint's 400
            assert "invalid_grant" in str(error), error
        assert len(shell.deliveries()) == 1
    finally:
        shell.stop()


def the_log_as_har_opens_in_a_har_library_with_its_secrets_redacted(work):
    from haralyzer import HarParser
    shell = Shell(work)
    try:
        token = shell.device("ios")
        # A provider token (no key is registered, so its signature is not checked): its
        # signature is the secret part.
        part = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()
        signature = part(b"secret-signature" * 4)
        secret = (f'bearer {part(json.dumps({"alg": "ES256", "kid": "K"}).encode())}.'
                  f'{part(json.dumps({"iss": "TEAM000001", "iat": int(time.time())}).encode())}.{signature}')
        import httpx
        with httpx.Client(http1=False, http2=True) as client:  # APNs takes HTTP/2 only
            answer = client.post(f"http://127.0.0.1:{shell.port}/3/device/{token}", content=b'{"aps":{"alert":"x"}}',
                                 headers={"apns-topic": "com.example.app", "authorization": secret})
        assert answer.status_code == 200, answer.text
        status, body = api(shell, "GET", "/api/v1/log.har")
        assert status == 200, body
        assert signature.encode() not in body
        har = json.loads(body)
        entries = HarParser(har).har_data["entries"]
        assert len(entries) == 1, entries  # the line protocol's requests are not HTTP exchanges
        from haralyzer import HarEntry
        entry = HarEntry(entries[0])
        assert entry.request.method == "POST"
        # The URL as the client asked for it: the authority with its port.
        assert entry.request.url == f"http://127.0.0.1:{shell.port}/3/device/{token}", entry.request.url
        assert entry.response.status == 200, entry.response.raw_entry
        assert entry.request.get_header_value("apns-topic") == "com.example.app"
        assert "redacted" in entry.request.get_header_value("authorization")
        assert entry.time >= 0
    finally:
        shell.stop()


if __name__ == "__main__":
    raise SystemExit(run_checks([
        firebase_admin_sends_with_the_worlds_service_account_and_a_reset_forgets_it,
        the_log_as_har_opens_in_a_har_library_with_its_secrets_redacted,
    ]))
