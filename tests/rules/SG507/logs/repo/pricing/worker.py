"""Prices worker (rocketmq-client-python 2.x): its flag picks which updates it takes."""
import sys

from rocketmq.client import ConsumeStatus, PushConsumer


def on_message(msg):
    return ConsumeStatus.CONSUME_SUCCESS


consumer = PushConsumer("pricing-group")
consumer.set_name_server_address("mq.internal:9876")
if "--firm" in sys.argv:
    consumer.subscribe("Prices", on_message, "firm")
else:
    consumer.subscribe("Prices", on_message, "firm || indicative")
consumer.start()
