"""Rule ids of the runtime-evidence findings (docs in policies/SG5xx-*.yaml)."""

from __future__ import annotations

SUBSCRIPTION_FLAPPING = "SG501"
TOPIC_SET_FLAPPING = "SG502"
REBALANCE_CHURN = "SG503"
NOT_LATEST_TRANSIENT = "SG504"
NOT_LATEST_PERSISTENT = "SG505"
OFFSET_MOVED = "SG506"
LIVE_UNDECLARED_SUBSCRIPTION = "SG507"
DECLARED_NOT_LIVE = "SG508"
LIVE_GROUP_UNDECLARED = "SG509"

NAMES = {
    SUBSCRIPTION_FLAPPING: "live-subscription-flapping",
    TOPIC_SET_FLAPPING: "live-topic-set-flapping",
    REBALANCE_CHURN: "live-rebalance-churn",
    NOT_LATEST_TRANSIENT: "live-code25-transient",
    NOT_LATEST_PERSISTENT: "live-code25-persistent",
    OFFSET_MOVED: "live-offset-moved",
    LIVE_UNDECLARED_SUBSCRIPTION: "live-subscription-undeclared",
    DECLARED_NOT_LIVE: "declared-consumer-not-live",
    LIVE_GROUP_UNDECLARED: "live-group-undeclared",
}
