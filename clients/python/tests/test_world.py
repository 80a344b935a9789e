"""The client against the real binary: every call, its errors, and the races it removes."""

import json
import threading
import urllib.request

import pytest

import cxshell


def test_devices_are_made_read_listed_and_deleted(cx_world):
    made = cx_world.devices.create("ios", count=2)
    assert [device.id for device in made] == ["d1", "d2"]
    assert all(len(device.token) == 64 and device.platform == "ios" for device in made)
    android = cx_world.devices.create("android", ready=False, fcm_project="demo")[0]
    assert android.token and cx_world.devices.get("d3")["fcm_project"] == "demo"
    assert [d["device"] for d in cx_world.devices.list(platform="ios")] == ["d1", "d2"]
    cx_world.devices.delete("d1")
    assert [d["device"] for d in cx_world.devices.list()] == ["d2", "d3"]


def test_the_worlds_sentence_is_the_errors_message(cx_world):
    with pytest.raises(cxshell.WorldError) as refused:
        cx_world.devices.get("d9")
    assert refused.value.status == 404
    assert str(refused.value) == "there is no device 'd9'"
    with pytest.raises(cxshell.WorldError) as refused:
        cx_world.devices.create("pager")
    assert refused.value.status == 400 and "\"platform\" must be ios, android or web, not 'pager'" in str(refused.value)
    with pytest.raises(cxshell.WorldError) as refused:
        cx_world.reset(keep=["tokens"])
    assert str(refused.value).startswith('"keep" names no part of the world: "tokens"')


def test_requests_answer_what_standard_output_would_carry(cx_world):
    lines = cx_world.requests([{"op": "device", "platform": "android"}, {"op": "state"}])
    assert lines[0]["device"] == "d1" and lines[1]["platform"] == "android"


def test_wait_for_finds_an_entry_logged_before_it_was_asked(cx_world):
    phone = cx_world.devices.create("ios")[0]
    # Sent first, waited for after: the match is found, not missed.
    cx_world.requests({"op": "apns", "device": phone.id, "headers": {"apns-topic": "com.example.app"},
                       "body": {"aps": {"alert": "one"}}})
    entry = cx_world.wait_for(source="api", device=phone.id, q="apns")
    assert entry["status"] == 200
    # The next wait starts after that match: a second push is a new match.
    cx_world.requests({"op": "apns", "device": phone.id, "headers": {"apns-topic": "com.example.app"},
                       "body": {"aps": {"alert": "two"}}})
    second = cx_world.wait_for(source="api", device=phone.id, q="apns")
    assert second["seq"] > entry["seq"]


def test_wait_for_times_out_naming_what_was_logged(cx_world):
    cx_world.devices.create("ios")
    with pytest.raises(TimeoutError) as timed_out:
        cx_world.wait_for(timeout=1, source="fcm")
    assert "made 1 device" in str(timed_out.value)


def test_a_push_from_another_thread_is_waited_for(cx_world):
    phone = cx_world.devices.create("android")[0]
    gate = threading.Event()

    def backend():
        gate.wait()
        cx_world.requests({"op": "fcm", "body": {"message": {"token": phone.token, "data": {"k": "v"}}}})

    threading.Thread(target=backend).start()
    gate.set()
    assert cx_world.wait_for(device=phone.id, q="fcm", timeout=10)["status"] == 200


def test_the_stream_yields_entries_as_they_are_logged(cx_world):
    entries = cx_world.stream(source="api")
    seen = []
    ready = threading.Event()

    def read():
        for entry in entries:
            seen.append(entry)
            if len(seen) == 2:
                return

    reader = threading.Thread(target=read)
    reader.start()
    # The stream is open once the summary counts it; then two writes.
    while cx_world.summary()["watching"]["streams"] == 0:
        ready.wait(0.05)
    cx_world.devices.create("web", ready=False)
    cx_world.devices.create("web", ready=False)
    reader.join(10)
    assert [entry.get("device") for entry in seen] == ["d1", "d2"]


def test_a_chaos_block_adds_its_rule_and_removes_it(cx_world):
    phone = cx_world.devices.create("android")[0]
    push = {"op": "fcm", "body": {"message": {"token": phone.token, "data": {"k": "v"}}}}
    with cx_world.chaos({"service": "fcm", "then": {"answer": "UNAVAILABLE"}}) as rule:
        assert rule["id"] == "c1"
        assert cx_world.requests(push)[-1]["chaos"] == "c1"
    assert cx_world.requests(push)[-1]["ok"] is True
    # A rule that ran out its count inside the block is not an error when it ends.
    with cx_world.chaos({"service": "fcm", "count": 1, "then": {"answer": "INTERNAL"}}):
        cx_world.requests(push)
    with pytest.raises(cxshell.WorldError) as refused:
        with cx_world.chaos({"service": "fcm", "then": {"answer": "Nope"}}):
            pass
    assert "'Nope' is not an answer fcm gives" in str(refused.value)


def test_key_files_are_written_and_registered(cx_world):
    path = cx_world.credentials.fcm_service_account("demo-app")
    account = json.load(open(path))
    assert account["type"] == "service_account" and account["project_id"] == "demo-app"
    key_id, team, p8 = cx_world.credentials.apns_key()
    assert open(p8).read().startswith("-----BEGIN PRIVATE KEY-----") and team == "TEAM000001"
    assert key_id.startswith("CXSHELL")


def test_reset_clears_and_says_what(cx_world):
    cx_world.devices.create("ios")
    cleared = cx_world.reset(keep=["log"])
    assert cleared["cleared"]["devices"] == 1 and cleared["kept"] == ["log"]
    assert cx_world.devices.list() == []


def test_proxy_env_reaches_the_world_with_its_ca(cx_world):
    settings = cx_world.proxy_env()
    assert settings["HTTPS_PROXY"] == cx_world.url and settings["https_proxy"] == cx_world.url
    assert open(settings["SSL_CERT_FILE"]).read().startswith("-----BEGIN CERTIFICATE-----")
    assert settings["REQUESTS_CA_BUNDLE"] == settings["NODE_EXTRA_CA_CERTS"] == cx_world.ca_path


def test_a_running_world_is_connected_to_and_left_running(cx_world):
    with cxshell.World.connect(cx_world.url) as other:
        assert other.summary()["version"]
    assert urllib.request.urlopen(cx_world.url + "/readyz").status == 200


def test_a_missing_binary_is_named():
    with pytest.raises(cxshell.WorldError) as refused:
        cxshell.World.start(binary="/nowhere/cxshell")
    assert "no cxshell binary" in str(refused.value) and "/nowhere/cxshell" in str(refused.value)
