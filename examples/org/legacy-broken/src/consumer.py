from rocketmq.client import PushConsumer
def main(:
    consumer = PushConsumer("GID_LEGACY"
