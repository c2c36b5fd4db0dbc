import os

from rocketmq.client import PushConsumer


def main():
    consumer = PushConsumer(os.environ["LEGACY_GROUP"])
    consumer.subscribe("TOPIC_LEGACY", print, os.environ.get("LEGACY_TAGS"))
    consumer.start()
