"""The Java extractor (tree-sitter): facts per file, value resolution, consumers and Spring listeners."""
