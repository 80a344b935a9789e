"""A backend's retry, tested: FCM answers 503 twice, firebase-admin retries, one delivery."""

import json
import uuid

import firebase_admin
from firebase_admin import credentials, messaging


def test_unavailable_twice_then_delivered_once(cx_world, backend_env):
    phone = cx_world.devices.create("android")[0]
    app = firebase_admin.initialize_app(credentials.Certificate(cx_world.credentials.fcm_service_account("cxshell")),
                                        name=str(uuid.uuid4()))
    with cx_world.chaos({"service": "fcm", "count": 2, "then": {"answer": "UNAVAILABLE"}}):
        messaging.send(messaging.Message(token=phone.token, data={"k": "v"}), app=app)

    statuses = [entry["status"] for entry in cx_world.log(source="fcm")]
    assert statuses == [503, 503, 200]
    received = [json.loads(d["output"]) for d in cx_world.devices.get(phone.id)["deliveries"]]
    assert received == [{"k": "v", "mobiler_push": "received"}]  # once, not three times
