import argparse

from rocketmq.client import PushConsumer


def on_message(msg):
    return None


# one member's filter type is chosen at run time: TAG or SQL92, never both at once
parser = argparse.ArgumentParser()
parser.add_argument("--sql")
args = parser.parse_args()
consumer = PushConsumer("pricing-group")
if args.sql:
    # ok: SG104
    consumer.subscribe("Prices", on_message, expression=args.sql)
else:
    # ok: SG104
    consumer.subscribe("Prices", on_message, expression="updated")
consumer.start()
