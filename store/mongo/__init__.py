"""The server backend: MongoDB through PyMongo's async API, with a text index on title and summary."""

from store.mongo.backend import MongoStore

__all__ = ["MongoStore"]
