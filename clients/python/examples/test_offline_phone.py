"""A phone in flight mode, and the world's clock: what FCM keeps, and for how long."""


def send(world, phone, ttl, text):
    return world.requests({"op": "fcm", "body": {"message": {
        "token": phone.token, "data": {"text": text}, "android": {"ttl": ttl}}}})[-1]


def test_a_message_within_its_ttl_arrives_when_the_phone_is_back(cx_world):
    phone = cx_world.devices.create("android")[0]
    cx_world.requests({"op": "network", "device": phone.id, "online": False})
    assert send(cx_world, phone, "3600s", "kept")["effect"].startswith("stored")
    cx_world.advance_clock(30 * 60 * 1000)  # half an hour: within the ttl
    back = cx_world.requests({"op": "network", "device": phone.id, "online": True})[-1]
    assert "FCM delivered 1" in back["effect"]


def test_a_message_past_its_ttl_never_arrives(cx_world):
    phone = cx_world.devices.create("android")[0]
    cx_world.requests({"op": "network", "device": phone.id, "online": False})
    send(cx_world, phone, "60s", "too late")
    cx_world.advance_clock(2 * 60 * 1000)
    back = cx_world.requests({"op": "network", "device": phone.id, "online": True})[-1]
    assert back["effect"].endswith("FCM delivered 0 stored messages; 1 passed their ttl"), back["effect"]
    assert cx_world.devices.get(phone.id)["deliveries"] == []
