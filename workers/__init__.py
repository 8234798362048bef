"""Celery workers: the app, the beat schedule and thin tasks calling into exporters/ and ingest/."""
