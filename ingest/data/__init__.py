"""Curated enrichment data (text and YAML files, no code): loaded by ingest.enrich through importlib.resources."""
