"""The Python extractor (libcst): parse to a small IR, resolve values, link consumers."""
