"""Settings, tier table and scopes: the bottom layer every other package reads."""

from config.settings import Settings, load_settings
from config.tiers import SCOPES, TIERS, Tier, format_cost

__all__ = ["SCOPES", "TIERS", "Settings", "Tier", "format_cost", "load_settings"]
