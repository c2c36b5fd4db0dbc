"""subguard: a declarative linter and deploy-time policy gate for RocketMQ consumer subscriptions."""

__version__ = "0.1.0"
