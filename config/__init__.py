"""Settings, tier table and scopes: the bottom layer every other package reads."""

from config.settings import Settings, load_settings
from config.tiers import SCOPES, TIERS, Tier

__all__ = ["SCOPES", "TIERS", "Settings", "Tier", "load_settings"]
