"""Names shared by the order services."""

ORDER_TOPIC = "TOPIC_ORDER"
ORDER_GROUP = "GID_ORDER_EVENTS"
