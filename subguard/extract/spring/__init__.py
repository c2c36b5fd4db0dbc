"""Spring configuration: YAML/properties files, profiles, placeholders, bindings and client versions."""
