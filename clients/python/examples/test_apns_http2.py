"""An APNs HTTP/2 client (httpx, a provider token signed with PyJWT from the .p8) through the proxy."""

import ssl
import time

import httpx
import jwt


def test_an_alert_is_shown_in_the_tray(cx_world, backend_env):
    phone = cx_world.devices.create("ios")[0]
    cx_world.requests({"op": "kill", "device": phone.id})  # not running: iOS shows it
    key_id, team_id, p8 = cx_world.credentials.apns_key()
    token = jwt.encode({"iss": team_id, "iat": int(time.time())}, open(p8).read(), algorithm="ES256",
                       headers={"kid": key_id})

    with httpx.Client(http2=True, proxy=backend_env.proxy_env()["HTTPS_PROXY"], verify=ssl.create_default_context(cafile=cx_world.ca_path)) as apns:
        answer = apns.post(f"https://api.push.apple.com/3/device/{phone.token}",
                           headers={"authorization": f"bearer {token}", "apns-topic": "com.example.app",
                                    "apns-push-type": "alert"},
                           json={"aps": {"alert": {"title": "Order 42", "body": "shipped"}}})

    assert answer.status_code == 200 and answer.http_version == "HTTP/2"
    assert cx_world.devices.get(phone.id)["tray"][0]["title"] == "Order 42"


def test_a_token_signed_by_another_key_is_refused(cx_world, backend_env):
    phone = cx_world.devices.create("ios")[0]
    key_id, team_id, _ = cx_world.credentials.apns_key()
    _, _, other = cx_world.credentials.apns_key(key_id="OTHERKEY01")
    forged = jwt.encode({"iss": team_id, "iat": int(time.time())}, open(other).read(), algorithm="ES256",
                        headers={"kid": key_id})
    with httpx.Client(http2=True, proxy=backend_env.proxy_env()["HTTPS_PROXY"], verify=ssl.create_default_context(cafile=cx_world.ca_path)) as apns:
        answer = apns.post(f"https://api.push.apple.com/3/device/{phone.token}",
                           headers={"authorization": f"bearer {forged}", "apns-topic": "com.example.app"},
                           json={"aps": {"alert": "x"}})
    assert answer.status_code == 403 and answer.json()["reason"] == "InvalidProviderToken"
