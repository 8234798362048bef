"""Reference data every layer reads (YAML, no code): loaded by store modules through importlib.resources."""
