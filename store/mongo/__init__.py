"""The server backend: MongoDB through PyMongo's async API, with a text index on title and summary."""

from typing import Any

from pymongo import AsyncMongoClient

from store.mongo.accounts import MongoAccounts
from store.mongo.allowlist import MongoAllowlist
from store.mongo.articles import MongoArticles
from store.mongo.backend import MongoStore
from store.mongo.feeds import MongoFeeds
from store.mongo.ioc_store import MongoIocs
from store.mongo.sightings import MongoSightings
from store.mongo.sources import MongoSources
from store.mongo.stix_context import MongoContext
from store.mongo.webhooks import MongoWebhooks
from store.ports import Stores

__all__ = ["MongoAccounts", "MongoAllowlist", "MongoArticles", "MongoFeeds", "MongoIocs", "MongoSightings",
           "MongoSources", "MongoStore", "MongoWebhooks", "mongo_stores"]


def mongo_stores(client: AsyncMongoClient[dict[str, Any]], db_name: str) -> Stores:
    """Every concern on the database ``db_name`` of ``client``, sharing one ``MongoStore`` (not yet opened)."""
    conn = MongoStore(client, db_name)
    return Stores(conn, MongoArticles(conn), MongoIocs(conn), MongoSources(conn), MongoAccounts(conn),
                  MongoFeeds(conn), webhooks=MongoWebhooks(conn), sightings=MongoSightings(conn),
                  allowlist=MongoAllowlist(conn), context=MongoContext(conn))
