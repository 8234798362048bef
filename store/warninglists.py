"""Known-benign values: the MISP warninglists shipped offline in ``pymispwarninglists``.

A list applies to an IOC type when its ``matching_attributes`` name one of the MISP attribute types the
IOC type stands for (:data:`ATTRIBUTES`), and matches by its own ``type`` (MISP warninglists format):

- ``string``: the whole value; ``hostname``: the host or any parent domain (``login.microsoftonline.com``
  is on a list naming ``microsoftonline.com``); ``cidr``: the address inside a network (a bare address
  is a /32 or /128); ``substring``: an entry anywhere in the value; ``regex``: ``/pattern/flags``.
- A URL is judged by the lists for URLs, and also by its host when it names a whole site
  (``store.matching.bare_url_host``).

The lists are read from the package's files once per process (about two and a half million entries) and
indexed into dicts, so one value costs a few dict probes. ``version`` names the lists' contents: a stored
record computed under another version is rechecked (``ctiwire iocs recheck``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from store.matching import NetIndex, bare_url_host, host_key, parent_domains, parse_address, parse_network

# IOC type -> the MISP attribute types it stands for (MISP describeTypes), as lists name them.
ATTRIBUTES: dict[str, frozenset[str]] = {
    "ipv4": frozenset({"ip-src", "ip-dst"}),
    "ipv6": frozenset({"ip-src", "ip-dst"}),
    "domain": frozenset({"domain", "hostname"}),
    "url": frozenset({"url", "uri"}),
    "md5": frozenset({"md5"}),
    "sha1": frozenset({"sha1"}),
    "sha256": frozenset({"sha256"}),
    "sha512": frozenset({"sha512"}),
    "email": frozenset({"email-src", "email-dst"}),
}


@dataclass(frozen=True, slots=True)
class ListInfo:
    """One warninglist: its name (the label records carry), MISP type, version and optional category."""

    name: str
    type: str
    version: int
    category: str | None
    attributes: frozenset[str]

    def to_api(self) -> dict[str, str]:
        """What an answer says of the list: its name, and its category where the list has one."""
        return {"name": self.name, **({"category": self.category} if self.category else {})}


class _HashIndex:
    """Strings -> list ids, kept as two arrays sorted by the strings' hashes: the largest lists hold a million
    entries each, and a dict of them would take about a gigabyte per process where these take 10 bytes an
    entry. ``hash`` is stable within a process, which is all an index built per process needs; a 64-bit
    collision between a value and an entry is about one chance in 10^12 per lookup."""

    def __init__(self) -> None:
        self._chunks: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.uint16]]] = []
        self._keys: npt.NDArray[np.int64] = np.empty(0, np.int64)
        self._ids: npt.NDArray[np.uint16] = np.empty(0, np.uint16)

    def add(self, keys: list[str], list_id: int) -> None:
        hashes = np.fromiter((hash(k) for k in keys), np.int64, count=len(keys))
        self._chunks.append((hashes, np.full(len(keys), list_id, np.uint16)))

    def freeze(self) -> None:
        if not self._chunks:
            return
        keys = np.concatenate([k for k, _ in self._chunks])
        order = np.argsort(keys, kind="stable")
        self._keys, self._ids = keys[order], np.concatenate([i for _, i in self._chunks])[order]
        self._chunks = []

    def match(self, key: str) -> list[int]:
        h = hash(key)
        lo = int(np.searchsorted(self._keys, h))
        hi = lo
        while hi < len(self._keys) and self._keys[hi] == h:
            hi += 1
        return [int(i) for i in self._ids[lo:hi]]


class _SubstringIndex:
    """Entries found anywhere in a value, indexed by their first five characters: each position of the value
    costs one dict probe, then a ``startswith`` per entry sharing that head (a few), whatever the lists' size."""

    HEAD = 5

    def __init__(self) -> None:
        self.by_head: dict[str, list[tuple[str, int]]] = {}
        self.short: list[tuple[str, int]] = []  # entries shorter than a head, checked one by one

    def add(self, entries: list[str], list_id: int) -> None:
        for entry in (e.lower() for e in entries if e):
            if len(entry) >= self.HEAD:
                self.by_head.setdefault(entry[: self.HEAD], []).append((entry, list_id))
            else:
                self.short.append((entry, list_id))

    def match(self, value: str) -> list[int]:
        found = [i for entry, i in self.short if entry in value]
        for start in range(len(value) - self.HEAD + 1):
            for entry, i in self.by_head.get(value[start : start + self.HEAD], ()):
                if value.startswith(entry, start):
                    found.append(i)
        return found


def _regex(entry: str) -> re.Pattern[str] | None:
    """A MISP ``/pattern/flags`` entry as a Python pattern (``i`` honoured, ``g`` meaningless for a test)."""
    body, _, flags = entry.rpartition("/") if entry.startswith("/") else (entry, "", "")
    try:
        return re.compile(body.removeprefix("/"), re.IGNORECASE if "i" in flags else 0)
    except re.error:
        return None


class Warninglists:
    """Every list indexed once by its MISP type; each IOC type reads the lists that apply to it."""

    def __init__(self, raw: Iterable[dict[str, Any]], package_version: str = "") -> None:
        self.infos: list[ListInfo] = []
        self._exact, self._hosts, self._nets = _HashIndex(), _HashIndex(), NetIndex()
        self._substrings, self._regexes = _SubstringIndex(), list[tuple[re.Pattern[str], int]]()
        for item in raw:
            self._add(item)
        self._exact.freeze()
        self._hosts.freeze()
        self.lists = {info.name: info for info in self.infos}
        self._applies = {
            t: frozenset(i for i, info in enumerate(self.infos) if info.attributes & attrs)
            for t, attrs in ATTRIBUTES.items()
        }
        # The list types that apply to each IOC type: the others' indexes are not probed at all.
        self._kinds = {t: frozenset(self.infos[i].type for i in ids) for t, ids in self._applies.items()}
        digest = hashlib.sha256(json.dumps(sorted((i.name, i.version) for i in self.infos)).encode())
        self.version = f"{package_version}:{digest.hexdigest()[:16]}"

    def _add(self, item: dict[str, Any]) -> None:
        info = ListInfo(
            item["name"],
            item["type"],
            int(item.get("version", 0)),
            item.get("category"),
            frozenset(item.get("matching_attributes", ())),
        )
        list_id, entries = len(self.infos), item["list"]
        self.infos.append(info)
        if info.type == "string":
            self._exact.add([e.strip().lower() for e in entries], list_id)
        elif info.type == "hostname":
            self._hosts.add([host_key(e) for e in entries], list_id)
        elif info.type == "cidr":
            for entry in entries:
                if (network := parse_network(entry)) is not None:
                    self._nets.add_network(network, str(list_id))
        elif info.type == "substring":
            self._substrings.add(entries, list_id)
        elif info.type == "regex":
            self._regexes.extend((p, list_id) for p in filter(None, map(_regex, entries)))

    def names(self, ioc_type: str, value: str) -> list[str]:
        """The names of the lists ``value`` (record spelling of ``ioc_type``) is on, sorted."""
        applies = self._applies.get(ioc_type, frozenset())
        found = {i for i in self._candidates(ioc_type, value) if i in applies}
        if ioc_type == "url" and (host := bare_url_host(value)) is not None:
            return sorted({*(self.infos[i].name for i in found), *self.names(_host_type(host), host)})
        return sorted({self.infos[i].name for i in found})

    def _candidates(self, ioc_type: str, value: str) -> list[int]:
        """Ids of lists of the types that apply to ``ioc_type`` with an entry matching ``value`` by that type."""
        kinds, lowered, found = self._kinds.get(ioc_type, frozenset()), value.strip().lower(), list[int]()
        if "string" in kinds:
            found += self._exact.match(lowered)
        if "substring" in kinds:
            found += self._substrings.match(lowered)
        # A URL is judged by its host only when it names a whole site (``names``), not by every dotted part.
        if "hostname" in kinds and ioc_type != "url":
            found += [i for domain in parent_domains(lowered) for i in self._hosts.match(domain)]
        if "cidr" in kinds and (address := parse_address(value)) is not None:
            found += [int(i) for i in self._nets.match(address)]
        if "regex" in kinds:
            applies = self._applies[ioc_type]
            found += [i for pattern, i in self._regexes if i in applies and pattern.search(value)]
        return found

    def describe(self, names: Iterable[str]) -> list[dict[str, str]]:
        """The API form of the named lists (unknown names, from an older package, by name alone)."""
        return [self.lists[n].to_api() if n in self.lists else {"name": n} for n in names]


def _host_type(host: str) -> str:
    address = parse_address(host)
    return "domain" if address is None else f"ipv{address.version}"


def _lists_dir() -> Path:
    """The package's list files, found without importing it (its import builds sets this module does not use)."""
    spec = importlib.util.find_spec("pymispwarninglists")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("pymispwarninglists")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "misp-warninglists" / "lists"


def _read_lists() -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(_lists_dir().glob("*/list.json"))]


@cache
def warninglists() -> Warninglists:
    """The shipped lists, read and indexed once per process."""
    return Warninglists(_read_lists(), importlib.metadata.version("pymispwarninglists"))
