"""Webhooks: the live feed's events POSTed in signed batches to an account's URLs (README, "Webhooks").

``guard`` refuses URLs that reach the service's own network, ``signing`` makes and checks the signature
header, ``delivery`` runs one round of deliveries (a Celery task in production, a scheduled job of the
embedded server), ``service`` creates and resumes webhooks for the API and the account web.
"""
