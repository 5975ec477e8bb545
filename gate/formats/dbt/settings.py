"""A model's or version's own settings in a properties file: enforced, enabled, deprecation, alias.

Split from the properties parser because these are read by dbt's precedence
(version over model over ``dbt_project.yml``, ``first`` picks the most
specific one that says something) and through ``flags`` for Jinja values,
which is a different job from reading the columns they apply to.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date, datetime, time, timezone
from typing import Any

from gate.formats.common import describe, require_mapping
from gate.formats.dbt import flags as dbt_flags
from gate.formats.dbt.flags import Unevaluable
from gate.model import ContractError, ContractWarning
from gate.yaml_load import YMap


def enforced(
    mapping: YMap, path: str, owner: str, found: list[Unevaluable], top_level: bool = False
) -> bool | None:
    """``config.contract.enforced``, or ``None`` when the mapping does not say.

    On a model (``top_level``), dbt-core moves a top-level ``contract:`` into
    ``config`` before it reads it (``normalize_contract_attribute``), and refuses
    a model that has both; so does the gate. dbt does not move it on a version.
    """
    config = None
    if mapping.get("config") is not None:
        config = require_mapping(
            mapping["config"], path, f"{owner}: 'config'", mapping.key_line("config")
        )
    if top_level and mapping.get("contract") is not None:
        if config is not None and "contract" in config:
            raise ContractError(
                path,
                f"{owner}: 'contract' is both a top-level key and in 'config' (dbt refuses "
                "this: keep the one under 'config')",
                mapping.key_line("contract"),
            )
        holder, where = mapping, f"{owner}: 'contract'"
    elif config is not None and config.get("contract") is not None:
        holder, where = config, f"{owner}: 'config.contract'"
    else:
        return None
    contract = require_mapping(holder["contract"], path, where, holder.key_line("contract"))
    if contract.get("enforced") is None:
        return None
    return dbt_flags.read_yaml(
        contract["enforced"],
        dbt_flags.ENFORCED,
        path,
        contract.key_line("enforced"),
        f"{where.rstrip(chr(39))}.enforced'",
        found,
    )


def enabled(mapping: YMap, path: str, owner: str, found: list[Unevaluable]) -> bool | None:
    """``config.enabled``: Jinja is folded when constant, else read as true (guarded)."""
    config = mapping.get("config")
    if not isinstance(config, dict) or config.get("enabled") is None:
        return None
    return dbt_flags.read_yaml(
        config["enabled"],
        dbt_flags.ENABLED,
        path,
        config.key_line("enabled") if isinstance(config, YMap) else None,
        f"{owner}: 'config.enabled'",
        found,
    )


#: dbt's access modifiers (dbt-core ``AccessType``); a model says none: ``protected``.
ACCESS_LEVELS = ("private", "protected", "public")
DEFAULT_ACCESS = "protected"
#: An ``access`` the gate cannot evaluate (Jinja, a misspelling dbt itself refuses).
UNKNOWN_ACCESS = "unknown"


#: Set while a file refused on both sides for the same ``access`` is read again as the
#: base reads it (``lenient_access``): ``checked_access`` then reads as ``access_value``.
_LENIENT_ACCESS: ContextVar[bool] = ContextVar("lenient_access", default=False)


@contextmanager
def lenient_access() -> Iterator[None]:
    """Within it, an ``access`` dbt refuses for its case or spaces (``Public``) is read
    as ``access_value`` reads it (the base side's reading of a model file's
    ``config()``), not refused; one that names no modifier still is: read as unknown,
    a ``public`` misspelled by the pull request would narrow unseen."""
    token = _LENIENT_ACCESS.set(True)
    try:
        yield
    finally:
        _LENIENT_ACCESS.reset(token)


def access_value(raw: Any) -> str:
    """One ``access`` value: a modifier dbt knows (any case; constant Jinja folded),
    else ``UNKNOWN_ACCESS``. Lenient: the readers of real files use ``checked_access``,
    which refuses what dbt refuses."""
    if isinstance(raw, str) and dbt_flags.is_jinja(raw):
        raw = dbt_flags.fold_text(raw)
    text = raw.strip().lower() if isinstance(raw, str) else None
    return text if text in ACCESS_LEVELS else UNKNOWN_ACCESS


def checked_access(
    raw: Any, path: str, line: int | None, what: str, found: list[Unevaluable] | None = None
) -> str:
    """One ``access`` value as dbt takes it: ``private``, ``protected`` or ``public``
    exactly; constant Jinja (``{{ 'protected' }}``) is folded as dbt renders it, other
    Jinja (``{{ var('a') }}``) is ``UNKNOWN_ACCESS`` (not rendered), noted in ``found``.

    dbt-core validates every ``access`` it reads with ``AccessType.is_valid`` (a
    ``StrEnum``: ``AccessType('Public')`` raises) and raises
    ``InvalidAccessTypeError`` otherwise, in ``patch_node_properties`` (a model's
    or version's own ``access``), ``patch_node_config`` (``config.access``) and
    ``update_parsed_node_config`` (the model file's ``config()``); ``+access`` in
    ``dbt_project.yml`` fails ``ModelConfig``'s validation. ``dbt parse`` fails,
    so the gate refuses the value as it refuses an ``enabled`` that is no boolean,
    with the file and line, rather than read ``Public`` as ``public`` (dbt does
    not) or a misspelling as unknown (which compared nothing)."""
    if dbt_flags.is_jinja(raw):
        folded = dbt_flags.fold_text(raw)
        if folded is None:
            if found is not None:
                found.append((dbt_flags.ACCESS, dbt_flags.shown(raw), path, line))
            return UNKNOWN_ACCESS
        raw = folded
    if isinstance(raw, str) and raw in ACCESS_LEVELS:
        return raw
    if _LENIENT_ACCESS.get() and (lenient := access_value(raw)) != UNKNOWN_ACCESS:
        return lenient  # a case or spacing dbt refuses; a misspelling is refused still
    shown = _shown_access(raw) if isinstance(raw, str) else describe(raw)
    raise ContractError(
        path,
        f"{what} {shown} is not one of private, protected, public (dbt refuses any "
        "other value or case: InvalidAccessTypeError)",
        line,
    )


def _shown_access(raw: str) -> str:
    """A refused ``access`` string quoted: spaces around it kept in sight (``'public '``,
    which dbt refuses too), since ``shown`` folds whitespace away."""
    text = dbt_flags.shown(raw)
    if raw != raw.strip() and len(raw) <= 80 and "\n" not in raw:
        return f"'{raw}' (spaces around the value count)"
    return f"'{text}'"


def access(
    mapping: YMap,
    path: str,
    owner: str,
    top_level: bool = False,
    found: list[Unevaluable] | None = None,
) -> str | None:
    """A model's or version's own ``access`` in its properties entry; ``None``: not said.

    As dbt-core (1.7 to 1.11) resolves it, read in its source:

    * On a model (``top_level``), ``core/dbt/parser/schemas.py``
      ``YamlReader.normalize_access_attribute`` moves a top-level ``access`` into
      ``config`` before anything reads it, and refuses a model that has both (so
      does the gate). It is then one more ``config.access``: the model file's
      ``config(access=...)`` beats it and it beats ``+access``
      (``context/context_config.py`` ``calculate_node_config``: project, then
      the properties ``config``, then the model file's ``config()``).
    * On a version, only ``config.access`` counts (deep-merged over the model's
      ``config`` in ``ModelPatchParser.parse_patch``). The version's top-level
      ``access`` is not moved into ``config``: ``patch_node_properties`` sets it on
      the node, and ``patch_node_config`` then overwrites it with the config's
      ``access`` (``parser/base.py`` ``update_parsed_node_config``, whose config
      always holds one, ``ModelConfig``'s default ``protected``), so dbt ignores it.

    Jinja the gate cannot fold is ``UNKNOWN_ACCESS`` and recorded in ``found``
    (``dbt_config_unevaluable`` where the model was public).
    """
    config = mapping.get("config")
    said = config.get("access") if isinstance(config, dict) else None
    if top_level and mapping.get("access") is not None:
        if isinstance(config, dict) and "access" in config:
            raise ContractError(
                path,
                f"{owner}: 'access' is both a top-level key and in 'config' (dbt refuses "
                "this: keep the one under 'config')",
                mapping.key_line("access"),
            )
        return checked_access(
            mapping["access"], path, mapping.key_line("access"), f"{owner}: 'access'", found
        )
    if said is None:
        return None
    line = config.key_line("access") if isinstance(config, YMap) else None
    return checked_access(said, path, line, f"{owner}: 'config.access'", found)


def version_access(version: YMap, path: str, owner: str) -> ContractWarning | None:
    """A version's own top-level ``access``: checked as dbt checks it, then a warning
    that it has no effect (see ``access``: dbt overwrites it with the config's)."""
    raw = version.get("access")
    if raw is None:
        return None
    line = version.key_line("access")
    said = checked_access(raw, path, line, f"{owner}: 'access'")
    return ContractWarning(
        path,
        f"{owner}: a version's own 'access' has no effect in dbt (its config's access, "
        f"by default protected, replaces it); write it as 'config: {{access: {said}}}'",
        line,
    )


def deprecation_date(mapping: YMap, path: str, owner: str) -> datetime | None:
    """``deprecation_date`` as an aware datetime; a date or naive time is read as UTC."""
    value = mapping.get("deprecation_date")
    if value is None:
        return None
    line = mapping.key_line("deprecation_date")
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ContractError(
                path, f"{owner}: 'deprecation_date' is not a date: '{value}'", line
            ) from None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=timezone.utc)
    raise ContractError(
        path, f"{owner}: 'deprecation_date' must be a date, found {describe(value)}", line
    )


def alias(model: YMap) -> tuple[str, ...]:
    """``config.alias``: the relation name SQL consumers use instead of the model name."""
    config = model.get("config")
    value = config.get("alias") if isinstance(config, dict) else None
    return (value,) if isinstance(value, str) and value else ()


def first(*values: bool | None) -> bool:
    """The most specific setting that says something (callers end with the default)."""
    return next(value for value in values if value is not None)
