"""The IOC type registry is complete: every type has a fact or a stated ``Unsupported`` for every consumer,
detection is unambiguous between the built-in types, and a later type never takes a value from an earlier one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from store import ioctypes
from store.indicators import detect_type, normalize
from store.ioctypes import (
    CONSUMERS,
    POLICIES,
    REGISTRY,
    Blocklist,
    Cef,
    Ecs,
    Hunting,
    IocTypeSpec,
    Misp,
    OpenIocTerm,
    Rpz,
    Sigma,
    Stix,
    Suricata,
    Unsupported,
    UnsupportedIocType,
)

# The class each consumer's fact must have when the type is supported.
FACT_CLASSES: dict[str, type] = {
    "scan": str, "stix": Stix, "misp": Misp, "cef": Cef, "openioc": OpenIocTerm, "sigma": Sigma,
    "hunting": Hunting, "taxii": str, "blocklist": Blocklist, "rpz": Rpz, "suricata": Suricata, "ecs": Ecs,
}
SPECS = list(REGISTRY.values())


def test_every_consumer_has_a_policy_and_a_fact_class() -> None:
    assert set(CONSUMERS) == set(FACT_CLASSES) == set(POLICIES)
    assert set(POLICIES.values()) <= {"raise", "skip"}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
@pytest.mark.parametrize("consumer", CONSUMERS)
def test_every_type_maps_or_declares_unsupported(spec: IocTypeSpec, consumer: str) -> None:
    fact = getattr(spec, consumer)
    if isinstance(fact, Unsupported):
        assert fact.reason.strip(), f"{spec.name}.{consumer}: an Unsupported needs its reason"
        # A `raise` consumer refuses the type outright: no type of the API may be one (its exports would fail).
        assert POLICIES[consumer] == "skip", f"{spec.name} is unsupported by {consumer}, whose policy is raise"
    else:
        assert isinstance(fact, FACT_CLASSES[consumer]) and fact, (spec.name, consumer, fact)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_example_is_a_record_spelling_claimed_by_its_type_alone(spec: IocTypeSpec) -> None:
    assert normalize(spec.name, spec.example) == spec.example
    assert ioctypes.claimants(spec.example) == (spec.name,)
    assert detect_type(spec.example) == spec.name


def test_hash_types_have_their_digest_length() -> None:
    for spec in SPECS:
        assert (spec.scan == "hex") == bool(spec.hex_length), spec.name
        assert not spec.hex_length or len(spec.example) == spec.hex_length, spec.name


@pytest.fixture
def ntlm() -> Iterator[IocTypeSpec]:
    """A throwaway type that claims what md5 claims (32 hex digits), registered for one test."""
    md5 = REGISTRY["md5"]
    spec = IocTypeSpec("x-ntlm", "NTLM hash", "8846f7eaee8fb117ad06bdd830b7586c", md5.detect, md5.normalize,
                       *(Unsupported("test type") for _ in CONSUMERS))
    ioctypes.register(spec)
    yield spec
    ioctypes.unregister(spec.name)


def test_a_later_type_never_takes_a_value_an_earlier_one_claims(ntlm: IocTypeSpec) -> None:
    assert ioctypes.claimants(ntlm.example) == ("md5", "x-ntlm")  # the ambiguity is visible to callers
    assert detect_type(ntlm.example) == "md5"
    assert normalize("x-ntlm", ntlm.example.upper()) == ntlm.example  # a caller that names the type gets it
    with pytest.raises(ValueError, match="already registered"):
        ioctypes.register(ntlm)


def test_unknown_types_and_unsupported_facts_are_refused_by_name() -> None:
    with pytest.raises(UnsupportedIocType, match="not a registered IOC type"):
        normalize("x-unknown", "value")
    with pytest.raises(UnsupportedIocType, match="OpenIOC 1.1 has no term") as refused:
        ioctypes.mapping("sha512", "openioc", OpenIocTerm)
    assert (refused.value.ioc_type, refused.value.consumer) == ("sha512", "openioc")


def test_skipped_note_counts_per_reason_and_names_every_type_with_that_reason() -> None:
    note = ioctypes.skipped_note(["sha512", "ipv4", "cve", "cve"], "openioc")
    assert note == ["3 SHA-512, CVE or ATT&CK technique record(s) omitted: OpenIOC 1.1 has no term for them"]
    assert ioctypes.skipped_note(["ipv4", "url"], "sigma") == []


def test_substring_search_covers_registered_types_including_its_own() -> None:
    for spec in SPECS:
        assert not spec.substring_search or spec.name in spec.substring_search
        assert set(spec.substring_search) <= set(REGISTRY)
    assert {s.name for s in SPECS if s.substring_search} == {"domain", "url"}
