"""Shared vocabulary every layer reads: records, configuration, limits, the group map, the content cache."""
