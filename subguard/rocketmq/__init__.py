"""Pure RocketMQ semantics: tag and SQL92 expressions, client versions. No I/O, no subguard layers above core."""
