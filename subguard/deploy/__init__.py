"""How services run: environments, service identity, deployment links, offset-store reasoning and the
manifest value helpers, so that rules never import `extract/`."""
