from rocketmq.client import PushConsumer


def on_message(msg):
    return None


member = PushConsumer("pricing-group")
# ok: SG104
member.subscribe("Prices", on_message, expression="updated")
member.start()
