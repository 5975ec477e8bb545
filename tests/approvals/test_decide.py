"""Who must approve a break under each policy, and when nobody can (fail closed)."""

from __future__ import annotations

from dataclasses import replace

from gate import rules
from gate.approvals.codeowners import parse
from gate.approvals.decide import Reviewed, apply
from gate.approvals.policy import ApprovalPolicy, ApprovalRule
from gate.model import Change, Consumer
from gate.rules import Severity

OWNERS = parse("* @alice\n/reports/ @bob\n", "CODEOWNERS")


def narrowed(*readers: str) -> Change:
    change = Change.of(
        rules.TYPE_NARROWED,
        Severity.ERROR,
        "shop/orders",
        "c.yaml",
        3,
        "narrowed",
        column="id",
        before="BIGINT",
        after="INT",
    )
    consumers = tuple(Consumer(path=p, line=1, object="x", usage="selected") for p in readers)
    return replace(change, consumers=consumers)


def policy(approval: str, approvers: tuple[str, ...] = ()) -> ApprovalPolicy:
    rule = ApprovalRule(("shop/*",), approval, "approval", approvers)
    return ApprovalPolicy((rule,), {"Sales": ("@acme/sales",)})


def decided(change: Change, approval: str, by: tuple[str, ...], **kw) -> bool:
    out = apply(
        [change],
        policy(approval, kw.get("approvers", ())),
        kw.get("co", OWNERS),
        {"shop/orders": kw.get("owners", ("Sales",))},
        by,
        kw.get("reviews"),
    )
    return out.changes[0].acknowledged


def test_consumers_needs_one_owner_of_each_reader() -> None:
    change = narrowed("reports/a.sql", "jobs/b.py")
    assert not decided(change, "consumers", ("@bob",))
    assert decided(change, "consumers", ("@bob", "@alice"))


def test_all_of_needs_the_readers_and_the_contract_owners() -> None:
    change = narrowed("reports/a.sql")
    assert not decided(change, "all-of", ("@bob",))
    assert decided(change, "all-of", ("@bob", "@acme/sales"))


def test_any_of_takes_one_of_them_all() -> None:
    change = narrowed("reports/a.sql")
    assert decided(change, "any-of", ("@acme/sales",))
    assert decided(change, "any-of", ("@bob",))
    assert not decided(change, "any-of", ("@carol",))


def test_any_of_with_an_unreadable_codeowners_fails_closed() -> None:
    broken = parse("* @alice\n!x @bob\n", "CODEOWNERS")
    assert not decided(narrowed("reports/a.sql"), "any-of", ("@acme/sales",), co=broken)


def test_nobody_to_ask_keeps_the_break_blocking() -> None:
    assert not decided(narrowed(), "consumers", ("@bob", "@alice"))  # no reader
    assert not decided(narrowed("reports/a.sql"), "owners", ("@x",), owners=())
    # the config's approvers stand in for a source that names nobody
    assert decided(narrowed(), "consumers", ("@carol",), approvers=("@carol",))


def test_a_change_request_blocks_an_otherwise_approved_break() -> None:
    def reviews(change, candidates, bots):
        return Reviewed(frozenset({"@bob"}), frozenset({"@bob"}))

    assert not decided(narrowed("reports/a.sql"), "consumers", (), reviews=reviews)
