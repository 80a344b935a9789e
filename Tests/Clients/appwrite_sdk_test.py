"""Appwrite's Messaging server played by the world (channels.md, APW-9 … APW-15), driven
by Appwrite's own Python server SDK (`appwrite` on PyPI), unmodified: pointed at the
front door as its endpoint, through HTTPS_PROXY and the test CA as any backend would
be. Devices listen on a real mosquitto whose dynamic security the world administers.
Prints one line of totals."""

import json
import sys

from appwrite.client import Client
from appwrite.enums.message_status import MessageStatus
from appwrite.enums.messaging_provider_type import MessagingProviderType
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.services.messaging import Messaging
from appwrite.services.users import Users

from world import Broker, Proxied, Shell, run_checks


def project(shell, broker, key="k1"):
    reply = shell.send({"op": "appwrite_project", "project": "p1", "key": key, "endpoint": broker.endpoint,
                        "admin": broker.admin})
    assert reply["ok"], reply


def client(endpoint="https://cloud.appwrite.io/v1", key="k1"):
    return Client().set_endpoint(endpoint).set_project("p1").set_key(key)


def appwrite_device(shell, user, **options):
    """A running Android app registered on Appwrite Push; the register reply."""
    shell.send({"op": "device", "platform": "android"})
    shell.send({"op": "launch"})
    shell.send({"op": "subscribe", "key": "push", "plugin": "push", "stream": "events", "input": ""})
    return register(shell, user, **options)


def register(shell, user, **options):
    register = {"channel": "appwrite", "endpoint": options.pop("endpoint"), "user": user, "project": "p1", **options}
    return shell.send({"op": "call", "plugin": "push", "method": "register", "input": json.dumps(register)})


def arrived(shell, message_id):
    """The `mqtt` report line of message `message_id`, once it arrived."""
    lines = shell._lines(lambda line: line.get("network") == "mqtt" and line.get("messageId") == message_id, 1)
    return [line for line in lines if line.get("network") == "mqtt" and line.get("messageId") == message_id][0]


def the_sdk_sets_up_a_project_and_sends_to_a_user_a_topic_and_a_target(work):
    broker, shell = Broker(work), Shell(work)
    try:
        project(shell, broker)
        with Proxied(shell):
            messaging, users = Messaging(client()), Users(client())
            provider = messaging.create_appwrite_provider("push", "Push", qos=1, expiry=86400)
            assert provider.id == "push" and provider.provider == "appwrite" and provider.enabled, provider
            assert messaging.update_appwrite_provider("push", expiry=3600).options["expiry"] == 3600
            assert users.create("u1", name="Ada").name == "Ada"
            secret = users.create_session("u1").secret
            target = users.create_target("u1", "t1", MessagingProviderType.PUSH, ID.unique(), provider_id="push")
            assert target.userid == "u1" and target.providerid == "push", target
            assert messaging.create_topic("news", "News").id == "news"
            subscriber = messaging.create_subscriber("news", ID.unique(), "t1")
            assert subscriber.target.id == "t1" and subscriber.userid == "u1", subscriber
        reply = appwrite_device(shell, "u1", endpoint=broker.endpoint, credential=secret, topics=["users/u1", "news"])
        assert reply["ok"], reply
        with Proxied(shell):
            sent = [
                messaging.create_push(ID.unique(), title="Shipped", body="Track it", users=["u1"],
                                      data={"orderId": "o1"}),
                messaging.create_push(ID.unique(), title="News", body="Today", topics=["news"]),
                messaging.create_push(ID.unique(), title="Yours", targets=["t1"]),
            ]
            for message in sent:
                assert message.status == MessageStatus.SENT, message
        for message, topic in zip(sent, ["users/u1", "news", "users/u1"]):
            report = arrived(shell, message.id)
            assert report["topic"] == topic and report["device"] == "d1", report
            assert "received" in report["effect"], report
        # The core's `received` event carries the data and the notification (APW-4).
        first = json.dumps(shell.deliveries(3)[0])
        assert "orderId" in first and "o1" in first and "Shipped" in first, first
        with Proxied(shell):
            read = messaging.get_message(sent[0].id)
            assert read.status == MessageStatus.SENT and read.deliveredtotal == 1, read
            try:
                messaging.create_push(sent[0].id, title="again", users=["u1"])
                raise AssertionError("a taken messageId was accepted")
            except AppwriteException as error:
                assert error.code == 409 and error.type == "message_already_exists", error
        reports = shell.reports("appwrite", 12)
        assert len(reports) == 12 and all(report.get("project") == "p1" for report in reports), reports
    finally:
        shell.stop()
        broker.stop()


def the_sdk_fails_cleanly_with_a_wrong_key_on_a_self_hosted_endpoint(work):
    broker, shell = Broker(work, admin=False), Shell(work)
    try:
        project(shell, broker)
        with Proxied(shell, proxy=False):
            endpoint = f"https://127.0.0.1:{shell.port}/v1"
            try:
                Users(client(endpoint, key="wrong")).create("u1")
                raise AssertionError("a wrong key was accepted")
            except AppwriteException as error:
                assert error.code == 401 and error.type == "user_unauthorized", error
            # Nothing was made by it; the right key works on the same endpoint.
            assert Users(client(endpoint)).create("u1").id == "u1"
    finally:
        shell.stop()
        broker.stop()


def a_user_with_an_fcm_target_and_an_appwrite_target_gets_both_routes(work):
    broker, shell = Broker(work), Shell(work)
    try:
        project(shell, broker)
        with Proxied(shell):
            messaging, users = Messaging(client()), Users(client())
            messaging.create_appwrite_provider("push", "Push")
            messaging.create_fcm_provider("fcm", "FCM")
            users.create("u1")
            secret = users.create_session("u1").secret
        assert appwrite_device(shell, "u1", endpoint=broker.endpoint, credential=secret)["ok"]
        token = shell.device("android")
        with Proxied(shell):
            users.create_target("u1", "phone", MessagingProviderType.PUSH, token, provider_id="fcm")
            only_fcm = messaging.create_push(ID.unique(), title="One", users=["u1"])
            report = shell.reports("appwrite", 5)[-1]
            assert report["routes"] == [{"user": "u1", "route": ["fcm"]}], report
            assert report["devices"][0]["device"] == "d2", report
            users.create_target("u1", "tablet", MessagingProviderType.PUSH, ID.unique(), provider_id="push")
            both = messaging.create_push(ID.unique(), title="Two", users=["u1"])
            assert messaging.get_message(both.id).deliveredtotal == 2
        assert arrived(shell, both.id)["device"] == "d1"
        assert not [line for line in shell.lines if line.get("messageId") == only_fcm.id and line.get("network") == "mqtt"]
    finally:
        shell.stop()
        broker.stop()


CHECKS = [
    the_sdk_sets_up_a_project_and_sends_to_a_user_a_topic_and_a_target,
    the_sdk_fails_cleanly_with_a_wrong_key_on_a_self_hosted_endpoint,
    a_user_with_an_fcm_target_and_an_appwrite_target_gets_both_routes,
]

if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, "appwrite sdk"))
