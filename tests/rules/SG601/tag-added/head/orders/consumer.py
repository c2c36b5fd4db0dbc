from rocketmq.client import PushConsumer


def handle(msg):
    return None


consumer = PushConsumer("GID_ORDERS")
# ruleid: SG601
consumer.subscribe("TopicOrders", handle, expression="created||paid||refunded")
consumer.start()

audit = PushConsumer("GID_ORDERS_AUDIT")
# ok: SG601
audit.subscribe("TopicOrders", handle, expression="*")
audit.start()
