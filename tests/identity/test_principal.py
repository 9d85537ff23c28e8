"""Roles per tenant: what a principal may do where."""

from __future__ import annotations

from tempo_agents.identity import ALL_TENANTS, Principal, Role


def test_an_operator_for_one_tenant_only_views_another() -> None:
    carol = Principal(
        "carol",
        roles={"acme": frozenset({Role.OPERATOR}), "globex": frozenset({Role.VIEWER})},
    )
    assert carol.may(Role.OPERATOR, "acme")
    assert carol.may(Role.VIEWER, "acme")
    assert carol.may(Role.VIEWER, "globex")
    assert not carol.may(Role.OPERATOR, "globex")
    assert not carol.may(Role.VIEWER, "initech")
    assert not carol.may(Role.APPROVER, "acme")  # operating is not answering
    assert carol.tenants_for(Role.VIEWER) == frozenset({"acme", "globex"})
    assert carol.tenants_for(Role.OPERATOR) == frozenset({"acme"})


def test_an_administrator_may_everything_everywhere() -> None:
    root = Principal.administrator("root", groups=["ops"])
    assert root.groups == ("ops",)
    for role in Role:
        assert root.may(role, "acme")
        assert root.may(role, None)
        assert root.tenants_for(role) is None


def test_roles_held_in_every_tenant_add_to_a_tenant_s_own() -> None:
    dana = Principal("dana", roles={ALL_TENANTS: frozenset({Role.VIEWER}), "acme": frozenset({Role.APPROVER})})
    assert dana.may(Role.VIEWER, "globex")
    assert dana.may(Role.APPROVER, "acme")
    assert not dana.may(Role.APPROVER, "globex")
    assert dana.tenants_for(Role.VIEWER) is None
    assert dana.tenants_for(Role.APPROVER) == frozenset({"acme"})


def test_a_principal_without_roles_may_nothing() -> None:
    nobody = Principal("nobody")
    assert not any(nobody.may(role, "acme") for role in Role)
    assert nobody.tenants_for(Role.VIEWER) == frozenset()
