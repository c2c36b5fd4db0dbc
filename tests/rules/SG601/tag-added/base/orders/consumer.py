from rocketmq.client import PushConsumer


def handle(msg):
    return None


consumer = PushConsumer("GID_ORDERS")
consumer.subscribe("TopicOrders", handle, expression="created||paid")
consumer.start()

audit = PushConsumer("GID_ORDERS_AUDIT")
audit.subscribe("TopicOrders", handle, expression="*")
audit.start()
