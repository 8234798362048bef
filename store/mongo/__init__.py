"""The server backend: MongoDB through PyMongo's async API, with a text index on title and summary."""

from typing import Any

from pymongo import AsyncMongoClient

from store.mongo.backend import MongoStore
from store.ports import Stores

__all__ = ["MongoStore", "mongo_stores"]


def mongo_stores(client: AsyncMongoClient[dict[str, Any]], db_name: str) -> Stores:
    """Every concern on the database ``db_name`` of ``client`` (not yet opened)."""
    return Stores.of(MongoStore(client, db_name))
