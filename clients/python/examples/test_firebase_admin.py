"""firebase-admin, unmodified, sends to a simulated Android phone through the world."""

import json
import uuid

import firebase_admin
from firebase_admin import credentials, messaging


def test_a_data_message_reaches_the_app(cx_world, backend_env):
    phone = cx_world.devices.create("android")[0]
    account = cx_world.credentials.fcm_service_account("cxshell")  # the devices' default project
    app = firebase_admin.initialize_app(credentials.Certificate(account), name=str(uuid.uuid4()))

    name = messaging.send(messaging.Message(token=phone.token, data={"order": "42"}), app=app)

    assert name.startswith("projects/cxshell/messages/")
    sent = cx_world.wait_for(source="fcm", device=phone.id)
    assert sent["status"] == 200
    # What the app's core received: the push plugin's event with the data.
    received = [json.loads(d["output"]) for d in cx_world.devices.get(phone.id)["deliveries"]]
    assert received == [{"order": "42", "mobiler_push": "received"}]
