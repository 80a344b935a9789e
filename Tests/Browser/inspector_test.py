"""The inspector's page in a real browser (Debian's chromium, driven by Playwright), used
as a person would: the seed's four manual checks done by clicking, a push from an outside
client appearing in the open page's log, and a fleet of 10,000 devices listed without
the page hanging. Prints one line of totals; screenshots go to build/screenshots."""

import json
import os
import re
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request

from playwright.sync_api import expect, sync_playwright

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHELL = os.path.join(ROOT, ".build", "debug", "cxshell")
SHOTS = os.path.join(ROOT, "build", "screenshots")


class Shell:
    """A `cxshell serve --listen 127.0.0.1:0 --keep-running`, driven only over HTTP."""

    def __init__(self, work, *more):
        self.token = more[more.index("--api-token") + 1] if "--api-token" in more else None
        self.process = subprocess.Popen(
            [SHELL, "serve", "--listen", "127.0.0.1:0", "--keep-running", "--ca-dir", os.path.join(work, "ca"), *more],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = json.loads(self.process.stdout.readline())
        self.address = first["listening"]["address"]
        self.base = "http://" + self.address
        # Its output is the whole record; read it so the pipe never fills.
        import threading
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    def api(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"} if data else {}
        if self.token:
            headers["authorization"] = "Bearer " + self.token
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=120) as answer:
            text = answer.read()
            return json.loads(text) if text else None

    def stop(self):
        self.process.kill()
        self.process.wait()


def deliveries(page):
    return page.locator("#deliveries li").all_inner_texts()


def device_row(page, device):
    """The devices table's row for `device`: its first cell says exactly that id (a token
    in another row may contain the same characters)."""
    return page.locator("#devices tbody tr").filter(
        has=page.locator("td:first-child", has_text=re.compile("^" + re.escape(device) + "$")))


def send_seed_push(page, alert_title):
    """The form's APNs push, the seed's example with its own title."""
    page.get_by_label("Service").select_option("apns")
    body = {"aps": {"alert": {"title": alert_title, "body": "hi"}}, "type": "new_booking"}
    page.get_by_label("Body (JSON)").fill(json.dumps(body))
    page.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator("#push-result")).to_contain_text('"ok": true')


def seed_checks_by_clicking(page, shell):
    page.goto(shell.base + "/")
    page.get_by_label("New device").select_option("ios")
    page.get_by_role("button", name="Add, ready").click()
    expect(page.locator("#device-title")).to_have_text("Device d1 (ios)")
    # 1. App open, send: one received event, no navigation (DEL-1).
    send_seed_push(page, "First")
    expect(page.locator("#deliveries li")).to_have_count(1)
    expect(page.locator("#deliveries li").first).to_contain_text("received")
    expect(page.locator("#deliveries li").first).to_contain_text('"title":"First"')
    # 2. Background, send, open from the home screen: no event (DEL-2, TAP-5).
    page.get_by_role("button", name="Background").click()
    expect(page.locator("#device-facts")).to_contain_text("app background")
    send_seed_push(page, "Second")
    page.get_by_role("button", name="Launch").click()
    expect(page.locator("#device-facts")).to_contain_text("app foreground")
    expect(page.locator("#deliveries li")).to_have_count(1)
    # 3. Background, send, tap the banner: one opened event with its payload (TAP-1).
    page.get_by_role("button", name="Background").click()
    send_seed_push(page, "Third")
    page.get_by_role("button", name="Tap t3").click()
    expect(page.locator("#deliveries li")).to_have_count(2)
    expect(page.locator("#deliveries li").first).to_contain_text("opened")
    expect(page.locator("#deliveries li").first).to_contain_text('"title":"Third"')
    # 4. Force-quit, send, tap: opened arrives once the relaunched core subscribes (TAP-2, TAP-4).
    page.get_by_role("button", name="Kill").click()
    expect(page.locator("#device-facts")).to_contain_text("app not running")
    send_seed_push(page, "Fourth")
    page.get_by_role("button", name="Tap t4").click()
    expect(page.locator("#deliveries li")).to_have_count(2)
    page.get_by_role("button", name="Subscribe to push events").click()
    expect(page.locator("#deliveries li")).to_have_count(3)
    expect(page.locator("#deliveries li").first).to_contain_text("opened")
    expect(page.locator("#deliveries li").first).to_contain_text('"title":"Fourth"')
    # The log shows each push, status coloured; a row opens to its request.
    first = page.locator("#log-table tbody tr.entry").first
    first.click()
    expect(first).to_have_attribute("aria-expanded", "true")
    page.get_by_role("button", name="Make credentials and fill in curl").click()
    expect(page.locator("#curl")).to_contain_text("https://api.push.apple.com/3/device/")
    page.screenshot(path=os.path.join(SHOTS, "inspector-seed-checks.png"))


def outside_push_appears_live(page, shell):
    page.goto(shell.base + "/")
    expect(page.locator("#live")).to_have_text("(live)")
    token = shell.api("GET", "/api/v1/devices/d1")["token"]
    rows = page.locator("#log-table tbody tr.entry")
    # The page shows the log's newest 100 once it has loaded them; "(live)" can come
    # first. Wait for them, so the count below is the page's whole log.
    count = min(shell.api("GET", "/api/v1/world")["log"]["retained"], 100)
    expect(rows).to_have_count(count)
    authorization = shell.api("POST", "/api/v1/credentials", {"service": "apns"})["authorization"]
    expect(rows).to_have_count(count + 1)  # the credentials' own entry
    count += 1
    body = json.dumps({"aps": {"alert": {"title": "From a backend", "body": "over HTTP/2"}}})
    subprocess.run(["curl", "-s", "-o", "/dev/null", "--http2-prior-knowledge", "-H", "apns-topic: com.example.app",
                    "-H", "authorization: " + authorization, "-d", body, shell.base + "/3/device/" + token], check=True)
    expect(rows).to_have_count(count + 1, timeout=1000)
    expect(rows.first).to_contain_text("apns", timeout=1000)
    expect(rows.first).to_contain_text("200")
    page.locator("#devices tbody tr").first.click()
    expect(page.locator("#deliveries li").first).to_contain_text("From a backend")
    rows.first.click()
    page.screenshot(path=os.path.join(SHOTS, "inspector-live-log.png"))


def a_token_guarded_world_opens_by_signing_in(page, shell):
    """With --api-token the page opens by navigation, asks for the token, and then works;
    the API without it stays 401, and a wrong token is asked for again. Secrets shown
    with --log-secrets are announced above the log."""
    guarded = Shell(os.path.join(ROOT, "build", "browser"), "--api-token", "s3cret-token", "--log-secrets")
    try:
        guarded.api("POST", "/api/v1/devices", {"platform": "ios", "ready": True})
        try:
            urllib.request.urlopen(guarded.base + "/api/v1/world", timeout=10)
            raise AssertionError("the API answered without the token")
        except urllib.error.HTTPError as error:
            assert error.code == 401, error.code
        page.evaluate("sessionStorage.clear()")
        page.goto(guarded.base + "/")
        form = page.locator("#token-form")
        expect(form).to_be_visible()
        page.get_by_label("API token").fill("wrong")
        page.get_by_role("button", name="Use token").click()
        expect(form).to_be_visible()
        page.get_by_label("API token").fill("s3cret-token")
        page.get_by_role("button", name="Use token").click()
        expect(form).to_be_hidden()
        expect(page.locator("#devices tbody tr")).to_have_count(1)
        expect(page.locator("#secrets-shown")).to_be_visible()
        page.screenshot(path=os.path.join(SHOTS, "inspector-signed-in.png"))
        # A reload keeps the tab signed in.
        page.reload()
        expect(page.locator("#devices tbody tr")).to_have_count(1)
        page.evaluate("sessionStorage.clear()")
    finally:
        guarded.stop()


def key_files_download_and_register(page, shell):
    """The page saves a service-account JSON and a .p8 as downloads, each registered."""
    apns_keys_before = len(shell.api("GET", "/api/v1/snapshot")["credentials"]["apns_keys"])
    page.goto(shell.base + "/")
    page.get_by_label("Key file").select_option("service_account")
    page.get_by_label("Firebase project").fill("demo-app")
    with page.expect_download() as saved:
        page.get_by_role("button", name="Download key file").click()
    download = saved.value
    assert download.suggested_filename == "service-account-demo-app.json", download.suggested_filename
    account = json.loads(open(download.path()).read())
    assert account["type"] == "service_account" and account["project_id"] == "demo-app", account
    assert account["private_key"].startswith("-----BEGIN PRIVATE KEY-----"), account
    expect(page.locator("#message")).to_contain_text("registered")
    page.get_by_label("Key file").select_option("p8")
    expect(page.get_by_label("Firebase project")).to_be_hidden()
    with page.expect_download() as saved:
        page.get_by_role("button", name="Download key file").click()
    download = saved.value
    assert re.fullmatch(r"AuthKey_CXSHELL\d+\.p8", download.suggested_filename), download.suggested_filename
    assert open(download.path()).read().startswith("-----BEGIN PRIVATE KEY-----\n")
    page.screenshot(path=os.path.join(SHOTS, "inspector-key-files.png"))
    keys = shell.api("GET", "/api/v1/snapshot")["credentials"]
    assert [account["client_email"] for account in keys["google_keys"]] == [account["client_email"]], keys
    assert len(keys["apns_keys"]) == apns_keys_before + 1, keys
    # The other checks send unsigned: forget the keys.
    shell.api("POST", "/api/v1/reset", {"keep": ["devices", "chaos", "appwrite", "clock", "log"]})


def a_tray_entry_is_dismissed_and_an_apns_push_saved_for_simctl(page, shell):
    """PH-4 and PH-15 on the page: a tray entry's Dismiss button, and an APNs entry saved
    as an .apns file."""
    made = shell.api("POST", "/api/v1/devices", {"platform": "ios", "ready": True})["devices"][0]
    shell.api("POST", "/api/v1/requests", [
        {"op": "kill", "device": made["device"]},
        {"op": "apns", "device": made["device"], "headers": {"apns-topic": "com.example.app"},
         "body": {"aps": {"alert": {"title": "Simulate me", "body": "please"}, "badge": 4}}}])
    page.goto(shell.base + "/")
    device_row(page, made["device"]).click()
    expect(page.locator("#device-facts")).to_contain_text("badge 4")
    expect(page.locator("#tray-count")).to_have_text("1 of 64 kept; a new one lets the oldest go")
    page.get_by_role("button", name=re.compile("^Dismiss t1")).click()
    expect(page.locator("#tray")).to_contain_text("empty")
    expect(page.locator("#tray-count")).to_have_text("0 of 64 kept; a new one lets the oldest go")
    row = page.locator("#log-table tbody tr.entry", has_text="shown in the tray").first
    row.click()
    with page.expect_download() as saved:
        page.get_by_role("button", name="Save as simctl file").first.click()
    file = json.loads(open(saved.value.path()).read())
    assert file["Simulator Target Bundle"] == "com.example.app", file
    assert file["aps"]["alert"]["title"] == "Simulate me", file
    page.screenshot(path=os.path.join(SHOTS, "inspector-simctl.png"))


def phone_actions_badge_and_doze(page, shell):
    """PH-3 on the page: an action button with its text field on a tray entry, the event
    the core then receives; PH-9: an Android phone put in Doze and out."""
    made = shell.api("POST", "/api/v1/devices", {"platform": "ios", "ready": True})["devices"][0]
    categories = [{"id": "booking", "actions": [
        {"id": "accept", "title": "Accept", "foreground": True}, {"id": "reply", "title": "Reply", "input": True}]}]
    shell.api("POST", "/api/v1/requests", [
        {"op": "call", "device": made["device"], "plugin": "push", "method": "categories",
         "input": json.dumps(categories)},
        {"op": "kill", "device": made["device"]},
        {"op": "apns", "device": made["device"], "headers": {"apns-topic": "com.example.app"},
         "body": {"aps": {"alert": {"title": "Booking", "body": "7 pm"}, "category": "booking", "badge": 2}}}])
    page.goto(shell.base + "/")
    device_row(page, made["device"]).click()
    expect(page.locator("#device-facts")).to_contain_text("badge 2")
    expect(page.locator("#device-facts")).to_contain_text("categories: booking")
    page.get_by_label("Text for Reply on t1").fill("on my way")
    page.screenshot(path=os.path.join(SHOTS, "inspector-actions.png"))
    page.get_by_role("button", name="Reply (action reply) on t1").click()
    expect(page.locator("#tray")).to_contain_text("empty")
    expect(page.locator("#device-facts")).to_contain_text("app background")
    page.get_by_role("button", name="Subscribe to push events").click()
    expect(page.locator("#deliveries")).to_contain_text('"mobiler_input":"on my way"')
    expect(page.locator("#deliveries")).to_contain_text('"mobiler_action":"reply"')
    # PH-13: restored to a new phone, which the page then shows.
    page.get_by_role("button", name="Restore to a new phone").click()
    expect(page.locator("#device-title")).not_to_have_text(f"Device {made['device']} (ios)")
    expect(page.locator("#device-facts")).to_contain_text("app not running")
    device_row(page, made["device"]).click()
    expect(page.locator("#device-title")).to_have_text(f"Device {made['device']} (ios)")
    # Focus is the iPhone's (PH-8); Doze is Android's, not offered here.
    page.get_by_role("button", name="Focus on").click()
    expect(page.locator("#device-facts")).to_contain_text("Focus on")
    expect(page.get_by_role("button", name="Enter Doze")).to_be_hidden()
    android = shell.api("POST", "/api/v1/devices", {"platform": "android", "ready": True})["devices"][0]
    page.reload()
    device_row(page, android["device"]).click()
    page.get_by_role("button", name="Enter Doze").click()
    expect(page.locator("#device-facts")).to_contain_text("Doze on")
    page.screenshot(path=os.path.join(SHOTS, "inspector-doze.png"))
    page.get_by_role("button", name="Leave Doze").click()
    expect(page.locator("#device-facts")).to_contain_text("Doze off")
    # PH-6: the plugin's channel, turned off by keyboard, hides what is posted on it. Between
    # the focus and the key, a change from outside (a log entry the stream brings) rebuilds
    # the panel: the button keeps the keyboard's focus, and the key still reaches it.
    page.get_by_role("button", name="Turn off channel mobiler_push").focus()
    shell.api("POST", "/api/v1/requests", [{"op": "idle", "device": android["device"], "on": True}])
    expect(page.locator("#device-facts")).to_contain_text("Doze on")
    page.keyboard.press("Enter")
    expect(page.locator("#notification-channels")).to_contain_text("mobiler_push Notifications · off")
    # The toggle, rebuilt with its new label, still has the focus the key left it.
    expect(page.get_by_role("button", name="Turn on channel mobiler_push")).to_be_focused()
    shell.api("POST", "/api/v1/requests", [{"op": "idle", "device": android["device"], "on": False}])
    expect(page.locator("#device-facts")).to_contain_text("Doze off")
    shell.api("POST", "/api/v1/requests", [{"op": "fcm", "body": {"message": {
        "token": android["token"], "data": {"body": "hidden"}}}}])
    page.get_by_role("button", name="Turn on channel mobiler_push").click()
    expect(page.locator("#notification-channels")).to_contain_text("mobiler_push Notifications · on")
    expect(page.locator("#tray")).to_contain_text("empty")
    expect(page.locator("#tray-count")).to_have_text("0 of 50 kept; Android shows no more past that")
    page.screenshot(path=os.path.join(SHOTS, "inspector-channels.png"))


def ten_thousand_devices(page, shell):
    made = shell.api("POST", "/api/v1/devices", {"platform": "android", "count": 10000})
    assert len(made["devices"]) == 10000, len(made["devices"])
    started = time.monotonic()
    page.goto(shell.base + "/", timeout=10000)
    expect(page.locator("#devices tbody tr")).to_have_count(100)
    # The request that made them shows their count and range, not 10,000 ids.
    made_row = page.locator("#log-table tbody tr.entry", has_text="made 10000 devices")
    expect(made_row.locator("td").nth(2)).to_have_text(re.compile(r"^10000 devices: d\d+ … d\d+$"))
    page.get_by_role("button", name="More devices").click()
    expect(page.locator("#devices tbody tr")).to_have_count(200)
    page.get_by_label("Platform").select_option("android")
    page.get_by_role("button", name="Filter", exact=True).first.click()
    expect(page.locator("#devices tbody tr").first).to_contain_text("android")
    # The page still answers: a script round trip is immediate.
    assert page.evaluate("1 + 1") == 2
    elapsed = time.monotonic() - started
    assert elapsed < 10, f"the page took {elapsed:.1f} s with 10,000 devices"
    print(f"browser: 10,000 devices listed and paged in {elapsed:.2f} s")


def main():
    os.makedirs(SHOTS, exist_ok=True)
    work = os.path.join(ROOT, "build", "browser")
    os.makedirs(work, exist_ok=True)
    checks = [seed_checks_by_clicking, outside_push_appears_live, a_token_guarded_world_opens_by_signing_in,
              key_files_download_and_register, a_tray_entry_is_dismissed_and_an_apns_push_saved_for_simctl,
              phone_actions_badge_and_doze, ten_thousand_devices]
    passed = failed = 0
    shell = Shell(work)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            for check in checks:
                try:
                    check(page, shell)
                    assert not errors, f"the page's script failed: {errors}"
                    passed += 1
                    print(f"browser: {check.__name__} passed")
                except Exception:
                    failed += 1
                    page.screenshot(path=os.path.join(SHOTS, f"failed-{check.__name__}.png"))
                    print(f"browser: {check.__name__} FAILED")
                    traceback.print_exc()
            browser.close()
    finally:
        shell.stop()
    print(f"Browser: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
