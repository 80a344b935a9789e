"""Faults on demand met by real, unmodified clients (chaos.md; Docs/Chaos.md's table is
what these checks find): firebase-admin through HTTPS_PROXY and the test CA, httpx over
HTTP/2, curl and nghttp. Each check starts its own `cxshell serve --listen 127.0.0.1:0`,
drives the world through its standard input, and asserts what the client did and what
the world delivered. Prints one line of totals."""

import base64
import json
import subprocess
import sys
import tempfile
import time

import httpx

from world import Proxied, Shell, run_checks


def provider_token():
    """An APNs provider token, unsigned (no key is registered, so none is checked)."""
    part = lambda data: base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
    return f'bearer {part({"alg": "ES256", "kid": "K"})}.{part({"iss": "TEAM000001", "iat": int(time.time())})}.' + (
        base64.urlsafe_b64encode(bytes(64)).rstrip(b"=").decode())


def apns_push(client, shell, token):
    return client.post(f"http://127.0.0.1:{shell.port}/3/device/{token}", content=b'{"aps":{"alert":"x"}}',
                       headers={"apns-topic": "com.example.app", "authorization": provider_token()})


# MARK: firebase-admin

def firebase_app(shell, work):
    """firebase-admin with a service account of project `cxshell`, reaching the world
    through HTTPS_PROXY and trusting the test CA, as Docs/FrontDoor.md says."""
    import firebase_admin
    from firebase_admin import credentials
    key = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
                         check=True, capture_output=True, text=True).stdout
    account = {
        "type": "service_account", "project_id": "cxshell", "private_key_id": "k1", "private_key": key,
        "client_email": "backend@cxshell.iam.gserviceaccount.com", "client_id": "1",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return firebase_admin.initialize_app(credentials.Certificate(account), name=f"cx-{shell.port}")


def firebase_retries_unavailable_and_delivers_once(work):
    from firebase_admin import messaging
    shell = Shell(work)
    try:
        token = shell.device("android")
        app = firebase_app(shell, work)
        shell.send({"op": "chaos", "rule": {"service": "fcm", "count": 2, "then": {"answer": "UNAVAILABLE"}}})
        with Proxied(shell):
            name = messaging.send(messaging.Message(token=token, data={"k": "v"}), app=app)
        assert name.startswith("projects/cxshell/messages/"), name
        assert [report["status"] for report in shell.reports("fcm", 3)] == [503, 503, 200], shell.reports("fcm")
        assert len(shell.deliveries(1)) == 1, shell.deliveries()
    finally:
        shell.stop()


def firebase_waits_out_a_quota_retry_after_then_delivers_once(work):
    # urllib3, under firebase-admin, retries a 429 that carries Retry-After (its
    # RETRY_AFTER_STATUS_CODES), after sleeping as long as it says.
    from firebase_admin import messaging
    shell = Shell(work)
    try:
        token = shell.device("android")
        app = firebase_app(shell, work)
        shell.send({"op": "chaos", "rule": {"service": "fcm", "count": 1, "retry_after_s": 1,
                                            "then": {"answer": "QUOTA_EXCEEDED"}}})
        started = time.monotonic()
        with Proxied(shell):
            messaging.send(messaging.Message(token=token, data={"k": "v"}), app=app)
        assert time.monotonic() - started >= 1  # it waited out Retry-After
        assert [report["status"] for report in shell.reports("fcm", 2)] == [429, 200]
        assert len(shell.deliveries(1)) == 1
    finally:
        shell.stop()


def firebase_surfaces_quota_exceeded_when_its_retries_run_out(work):
    from firebase_admin import exceptions, messaging
    shell = Shell(work)
    try:
        token = shell.device("android")
        app = firebase_app(shell, work)
        shell.send({"op": "chaos", "rule": {"service": "fcm", "count": 5, "retry_after_s": 0,
                                            "then": {"answer": "QUOTA_EXCEEDED"}}})
        try:
            with Proxied(shell):
                messaging.send(messaging.Message(token=token, data={"k": "v"}), app=app)
            raise AssertionError("QUOTA_EXCEEDED was not raised")
        except messaging.QuotaExceededError as error:
            assert error.http_response.status_code == 429
            assert error.http_response.headers.get("retry-after") == "0"
            assert isinstance(error, exceptions.ResourceExhaustedError)
        assert [report["status"] for report in shell.reports("fcm", 5)] == [429] * 5  # 1 try and 4 retries
        assert not shell.deliveries()
    finally:
        shell.stop()


# MARK: httpx over HTTP/2

def httpx_retries_a_goaway_below_its_stream_on_a_new_connection(work):
    shell = Shell(work)
    try:
        first, second = shell.device("ios"), shell.device("ios")
        shell.send({"op": "chaos", "rule": {"service": "apns", "count": 1, "match": {"device": "d2"},
                                            "then": {"fault": "goaway"}}})
        with httpx.Client(http1=False, http2=True) as client:
            assert apns_push(client, shell, first).status_code == 200  # stream 1
            assert apns_push(client, shell, second).status_code == 200  # stream 3: GOAWAY(1), retried
        statuses = [report["status"] for report in shell.reports("apns", 3)]
        assert statuses == [200, 0, 200], statuses
        assert [line["device"] for line in shell.deliveries(2)] == ["d1", "d2"]  # the push happened once
    finally:
        shell.stop()


def httpx_raises_on_a_goaway_before_any_stream_a_reset_and_a_close(work):
    # A GOAWAY whose last stream id is 0 is one httpcore 1.0 does not retry: it tests
    # the id for truth before it compares it. A closed connection is a protocol error
    # or a read error, as the close races the client's last bytes.
    shell = Shell(work)
    try:
        token = shell.device("ios")
        for fault in ["goaway", "rst_stream", "close"]:
            shell.send({"op": "chaos", "rule": {"service": "apns", "count": 1, "then": {"fault": fault}}})
            with httpx.Client(http1=False, http2=True) as client:
                try:
                    answer = apns_push(client, shell, token)
                    raise AssertionError(f"{fault}: answered {answer.status_code}")
                except (httpx.RemoteProtocolError, httpx.ReadError):
                    pass
        assert [report["status"] for report in shell.reports("apns", 3)] == [0, 0, 0]
        assert not shell.deliveries()
    finally:
        shell.stop()


def httpx_returns_error_answers_without_retrying(work):
    shell = Shell(work)
    try:
        token = shell.device("ios")
        shell.send({"op": "chaos", "rule": {"service": "apns", "count": 3, "then": {"answer": "TooManyRequests"}}})
        with httpx.Client(http1=False, http2=True) as client:
            answer = apns_push(client, shell, token)
        assert answer.status_code == 429 and answer.json() == {"reason": "TooManyRequests"}
        assert len(shell.reports("apns", 1)) == 1
    finally:
        shell.stop()


# MARK: the PubNub SDK

def pubnub_sdk_raises_on_429_500_503_without_retrying(work):
    from pubnub.enums import PNPushEnvironment, PNPushType
    from pubnub.exceptions import PubNubException
    from pubnub.pnconfiguration import PNConfiguration
    from pubnub.pubnub import PubNub
    shell = Shell(work)
    try:
        token = shell.device("ios")
        config = PNConfiguration()
        config.publish_key, config.subscribe_key, config.user_id = "demo-pub", "demo", "backend"
        config.origin, config.ssl = f"127.0.0.1:{shell.port}", False
        pubnub = PubNub(config)
        pubnub.add_channels_to_push().push_type(PNPushType.APNS2).channels(["game"]).device_id(token).topic(
            "com.example.app").environment(PNPushEnvironment.PRODUCTION).sync()
        for status in ["429", "500", "503"]:
            shell.send({"op": "chaos", "rule": {"service": "pubnub", "count": 1, "match": {"path_prefix": "/publish/"},
                                                "then": {"answer": status}}})
            try:
                pubnub.publish().channel("game").message({"pn_apns": {"aps": {"alert": "x"}}}).sync()
                raise AssertionError(f"{status} was not raised")
            except PubNubException as error:
                assert f"({status})" in str(error), str(error)
        pubnub.stop()
        assert [report["status"] for report in shell.reports("pubnub", 4)] == [200, 429, 500, 503]  # no retries
        assert not shell.deliveries()
    finally:
        shell.stop()


# MARK: curl and nghttp (nghttp2's own client)

def command_line_clients_do_not_retry_a_goaway(work):
    shell = Shell(work)
    try:
        first, second = shell.device("ios"), shell.device("ios")
        urls = [f"http://127.0.0.1:{shell.port}/3/device/{token}" for token in (first, second)]
        headers = ["-H", "apns-topic: com.example.app", "-H", f"authorization: {provider_token()}"]
        shell.send({"op": "chaos", "rule": {"service": "apns", "count": 1, "match": {"device": "d2"},
                                            "then": {"fault": "goaway"}}})
        curl = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} ", "--http2-prior-knowledge",
                               *headers, "-d", '{"aps":{"alert":"x"}}', *urls], capture_output=True, text=True)
        assert curl.stdout.split() == ["200", "000"] and curl.returncode == 16, (curl.stdout, curl.returncode)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as body:
            body.write('{"aps":{"alert":"x"}}')
            body.flush()
            shell.send({"op": "chaos", "rule": {"service": "apns", "count": 1, "match": {"device": "d2"},
                                                "then": {"fault": "goaway"}}})
            nghttp = subprocess.run(["nghttp", "-s", *headers, "-d", body.name, *urls], capture_output=True,
                                    text=True)
        assert "Some requests were not processed. total=2, processed=1" in nghttp.stdout + nghttp.stderr
        assert [line["device"] for line in shell.deliveries(2)] == ["d1", "d1"]  # d2's push: never
    finally:
        shell.stop()


CHECKS = [
    firebase_retries_unavailable_and_delivers_once,
    firebase_waits_out_a_quota_retry_after_then_delivers_once,
    firebase_surfaces_quota_exceeded_when_its_retries_run_out,
    httpx_retries_a_goaway_below_its_stream_on_a_new_connection,
    httpx_raises_on_a_goaway_before_any_stream_a_reset_and_a_close,
    httpx_returns_error_answers_without_retrying,
    pubnub_sdk_raises_on_429_500_503_without_retrying,
    command_line_clients_do_not_retry_a_goaway,
]


def main():
    return run_checks(CHECKS)


if __name__ == "__main__":
    sys.exit(main())
