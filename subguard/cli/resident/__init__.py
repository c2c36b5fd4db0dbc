"""The resident server: `subguard serve` keeps subguard loaded, and each `check` of the same install
runs in a process forked from it instead of importing subguard anew (`client`, `server`, `address`)."""
