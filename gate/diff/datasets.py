"""The dataset family (``model_*``, ``contract_enforcement_*``, ``dbt_config_unevaluable``,
``latest_version_changed``): a dataset added, removed, disabled, renamed, moved
to another relation or no longer guarded, and what an unpinned dbt reference
resolves to.

Handlers only: which datasets pair is ``gate.diff.pairing``, the walk is
``gate.diff.walk``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from datetime import datetime

from gate import rules
from gate.diff.column_types import unknown_types
from gate.diff.conversion import converted, table_name
from gate.diff.emitter import DatasetPair, Emitter
from gate.model import Dataset, Relation, Server


def renamed(pair: DatasetPair) -> None:
    """A dataset whose id changed, unless every reader still finds it by its old name.

    A dbt model that gained ``versions:`` is read by ``ref('<model>')`` as its
    latest version, the only version a reader of the unversioned model can use:
    its id became ``<model>.v<N>`` but no ``ref()`` broke (the reverse breaks a
    pinned ``ref('<model>', v=<N>)``, so it stays a rename). Where the table now
    lives (``<model>_v<N>`` unless aliased back) is ``relation_moved``'s question.

    A DCS, ODCS or Soda id that changed only in case (``netStation`` ->
    ``netstation``) names the same table where the engine matches names whatever
    their case (``_case_only``), as the duplicate check already says; where the
    table lives is again ``relation_moved``'s question. dbt stays out: ``ref()``
    matches model names exactly.
    """
    old, new = pair.old, pair.new
    if _gained_versions(old, new) or _converted_as_is(pair) or _case_only(pair):
        return  # a conversion names its table each format's way; a case-only id, the same table
    if old.id != new.id:
        pair.emit(
            rules.MODEL_RENAMED,
            f"dataset renamed from '{old.id}' to '{new.id}'; consumers still read '{old.id}'",
            before=old.id,
            after=new.id,
            old_dataset=old.id,
        )


#: Engines where a relation name's case never matters (Databricks/Spark/Hive, DuckDB,
#: Redshift, Trino/Athena fold or match names case-insensitively, quoted or not).
_CASELESS = frozenset(
    {"databricks", "spark", "spark2", "hive", "duckdb", "redshift", "trino", "athena", "presto"}
)
#: Engines that fold unquoted names; dbt-snowflake quotes none unless ``quoting:`` says.
_FOLDS_UNQUOTED = frozenset({"snowflake"})
#: The target's database spelled out (``project`` is dbt-bigquery's name for it).
_TARGET_DATABASE = frozenset({"{{ target.database }}", "{{ target.project }}"})
#: An alias that names the model itself. At parse time dbt's ``this`` is the model's
#: relation under its default alias and ``model.name`` its name: for an unversioned
#: model both are the name ``generate_alias_name`` uses without an alias, so the
#: alias restates the default. (A version's default alias is ``<model>_v<N>``,
#: which ``model.name`` is not: kept as written there.) ``+schema: "{{ target.schema
#: }}"`` is *not* such a restatement: dbt's default ``generate_schema_name`` appends
#: a custom schema to the target's (``analytics_analytics``), so it stays a move.
_SELF_ALIAS = frozenset(
    {"{{ this.name }}", "{{ this.identifier }}", "{{ this.table }}", "{{ model.name }}"}
)
_MACRO = {
    "database": "generate_database_name",
    "schema": "generate_schema_name",
    "alias": "generate_alias_name",
}


def _effective(
    relation: Relation,
    part: str,
    dialect: str,
    macros: tuple[str, ...],
    unversioned: bool,
    target: str | None = None,
) -> str | None:
    """The part as the default macros use it: an empty or missing alias is the model's
    name (``generate_alias_name`` tests the alias for truth), and so is an alias that
    names the model itself (``_SELF_ALIAS``, for an ``unversioned`` model); the
    target's database (``target``: what the base side's profile names, when known)
    is none; case folded where the engine folds it. A project macro (``macros``:
    HEAD's, for both sides) gets the configured value as it is."""
    value = getattr(relation, part)
    caseless = dialect in _CASELESS or (dialect in _FOLDS_UNQUOTED and part not in relation.quoted)

    def folded(text: str | None) -> str | None:
        return text.casefold() if text is not None and caseless else text

    if part == "alias" and unversioned and value in _SELF_ALIAS:
        value = relation.default_alias  # what the expression renders to, macro or not
    if part == "alias" and _MACRO[part] not in macros and not value:
        value = relation.default_alias
    # dbt's generate_database_name: none is the target's database.
    restated = value in _TARGET_DATABASE or (target is not None and folded(value) == folded(target))
    if part == "database" and _MACRO[part] not in macros and restated:
        value = None
    return folded(value)


def _target_said(old: Relation, new: Relation, macros: tuple[str, ...]) -> str:
    """Why a database set where none was (or the reverse) is a move: the target's
    database that none means, or why the gate could not read it."""
    if _MACRO["database"] in macros or (old.database is None) == (new.database is None):
        return ""
    if new.target_database is not None:
        return f"; none is the target's database '{new.target_database}' ({new.target_source})"
    why = new.target_source or "no profiles.yml was read"
    return (
        f"; none is the target's database, unknown here ({why}), so the table may already be there"
    )


def _shown(relation: Relation, part: str, macros: tuple[str, ...]) -> str:
    value = getattr(relation, part)
    if value is not None and (value or part != "alias"):
        return f"'{value}'"
    if part == "alias":
        if _MACRO[part] in macros:
            return "no alias"
        return f"'{relation.default_alias}' (dbt's default)"
    return "none (the target's)"


#: DCS/ODCS server types (or, without servers, the run's dialect) whose engine
#: finds a table whatever the case its name is written in: the caseless engines,
#: and those that fold unquoted names (contracts write names unquoted, and
#: datacontract-cli's and Soda's checks query them so). Any other type (BigQuery,
#: S3, Kafka, MySQL...) keeps a case-only change a rename.
_CASE_FOLDING = _CASELESS | _FOLDS_UNQUOTED | {"postgres", "postgresql", "oracle", "glue", "impala"}
#: Server types that are one engine under two names (ODCS lists both).
_ENGINE = {"postgresql": "postgres"}
#: Characters of a placeholder or template (``${DB}``, ``{{ env }}``, ``<db>``): such a
#: value is filled in elsewhere, the same way on both sides (``_placeholders_differ``).
_TEMPLATE = frozenset("${}<>")


#: The keys whose value is a URL or prefix of files (compared by ``_files_root``).
FILE_KEYS = frozenset({"location"})
#: DCS's placeholder for the model's name in a files location.
_MODEL = "{model}"
#: A path segment with one of these is a file pattern (``*.parquet``), not a folder.
_GLOB = frozenset("*?[")
#: URL schemes for the objects another scheme names: Hadoop's S3 connectors, DuckDB's ``gcs``.
_SAME_STORE = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}
#: What is left of a file pattern that names no files of its own once its wildcards
#: and ``[...]`` classes are gone: nothing, extensions (``*.parquet``, ``*.csv.gz``)
#: or a Hive partition key (``year=*``).
_ANY_FILE = re.compile(r"(?:\.\w+)*|\w+=")
_CLASS = re.compile(r"\[[^[\]]*\]")  # no [ inside: one scan between brackets
#: A placeholder as the formats write one: ``${DB}``, ``$DB``, ``{{ env }}``, ``<db>``, ``{x}``.
_PLACEHOLDER = re.compile(r"\$\{[^${}]*\}|\$\w+|\{\{[^{}]*\}\}|\{[^{}]*\}|<[^<>]*>")


def _files_root(value: str) -> tuple[str, tuple[str, ...]]:
    """A ``location`` as the folder its files are in, and the file patterns
    dropped from its end: trailing slashes and the last segments that are file
    patterns go, so that ``s3://b/t/``, ``s3://b/t``, ``s3a://b/t`` and
    ``s3://b/t/*.parquet`` name one place. Case is kept past the scheme: object
    stores and file systems tell ``Orders/`` from ``orders/``. A pattern that
    names files of its own (``orders_*.parquet``, ``t.csv?raw=1``) is returned,
    so that another one in the same folder is another place (``_same_files``)."""
    parts = value.strip().rstrip("/").split("/")
    keep = len(parts)
    while keep > 1 and _GLOB & set(parts[keep - 1]):  # ``**/*.parquet``, ``year=*/``
        keep -= 1
    root = "/".join(parts[:keep]).rstrip("/")
    scheme, sep, rest = root.partition("://")
    if sep and scheme.isalnum():  # a URL's scheme has no case; some name one store twice
        scheme = scheme.lower()
        root = f"{_SAME_STORE.get(scheme, scheme)}://{rest}"
    named = tuple(p for p in parts[keep:] if not _ANY_FILE.fullmatch(_wildcards_out(p)))
    return root, named


def _wildcards_out(segment: str) -> str:
    return _CLASS.sub("", segment).replace("*", "").replace("?", "")


def _files_place(value: str) -> str:
    """A files location as the place it names (``_files_root``), as one text."""
    root, named = _files_root(value)
    return "/".join((root, *named))


def _placeholders_differ(was: str, now: str, same: Callable[[str, str], bool]) -> bool:
    """Whether two values with placeholders surely name two places.

    A placeholder is filled in elsewhere, the same way for both sides: values
    with the same placeholders in the same order differ where their text does
    (``s3://${bucket}/orders`` -> ``s3://${bucket}/archive``). Otherwise only
    the literal text before the first placeholder character and after the last
    can tell (``prod`` -> ``staging_${X}``, ``s3://acme/t`` ->
    ``s3://other/${env}/t``: no filling makes them one); ``${DB}`` ->
    ``{{ database }}`` stays unknown. Linear: one scan each.
    """
    if _PLACEHOLDER.findall(was) == _PLACEHOLDER.findall(now):
        return not same(was, now)
    head_was, tail_was = _literal_ends(was)
    head_now, tail_now = _literal_ends(now)
    n, m = min(len(head_was), len(head_now)), min(len(tail_was), len(tail_now))
    return not same(head_was[:n], head_now[:n]) or not same(
        tail_was[len(tail_was) - m :], tail_now[len(tail_now) - m :]
    )


def _literal_ends(value: str) -> tuple[str, str]:
    """The text before the first placeholder character and after the last one."""
    found = [i for i in (value.find(c) for c in _TEMPLATE) if i >= 0]
    if not found:
        return value, value
    last = max(value.rfind(c) for c in _TEMPLATE)
    return value[: min(found)], value[last + 1 :]


def _engine(server: Server, dialect: str) -> str:
    kind = (server.type or dialect).strip().casefold()
    return _ENGINE.get(kind, kind)


def _folds(dataset: Dataset, dialect: str) -> bool:
    """Whether every engine the dataset is served from matches names case-insensitively."""
    kinds = {_engine(s, dialect) for s in dataset.servers if s.type}
    return kinds <= _CASE_FOLDING if kinds else dialect in _CASE_FOLDING


def _case_only(pair: DatasetPair) -> bool:
    """A non-dbt dataset id changed only in case, on engines that fold case on both sides."""
    old, new = pair.old, pair.new
    return (
        old.id != new.id
        and old.id.casefold() == new.id.casefold()
        and "dbt" not in (old.format, new.format)
        and _folds(old, pair.dialect)
        and _folds(new, pair.dialect)
    )


def _converted_as_is(pair: DatasetPair) -> bool:
    """A conversion (paired by the case-folded table name) that names the table as it
    was, or in another case on engines that fold case on both sides: ``Orders`` ->
    ``orders`` on BigQuery is another table."""
    old, new = pair.old, pair.new
    if not converted(old, new):
        return False
    return table_name(old) == table_name(new) or (
        _folds(old, pair.dialect) and _folds(new, pair.dialect)
    )


def _gained_versions(old: Dataset, new: Dataset) -> bool:
    """An unversioned dbt model paired with the version ``ref('<model>')`` now reads."""
    return old.format == "dbt" and not old.unpinned_name and new.unpinned_name == old.id


def relation_moved(pair: DatasetPair) -> None:
    """A dbt model built into another relation: its configured database, schema or
    alias changed (``dbt_project.yml`` by folder, properties ``config:``, the model's
    ``config()``). ``ref()`` follows; a reader of ``analytics.orders`` outside dbt
    does not. Only the meaning counts: a value restated elsewhere, trimmed, or in
    another case where the engine folds it, is no move. For a rename, a default
    alias that follows the name is the rename's own finding.

    A DCS/ODCS dataset moves when a server it is served from moves it
    (``_servers_moved``)."""
    if pair.old.relation is None and pair.new.relation is None:
        _servers_moved(pair)
    old, new = pair.old.relation, pair.new.relation
    if old is None or new is None:
        return
    # A model that gained versions keeps its name for ref() but not its default
    # alias (``orders`` -> ``orders_v1``): a move, unlike a rename's own alias.
    renamed = pair.old.id != pair.new.id and not _gained_versions(pair.old, pair.new)
    mine = new.macros
    # An unversioned model's id is its name, its default alias too (a version's id
    # is ``<model>.v<N>``, its default alias ``<model>_v<N>``).
    was, now = pair.old.id == old.default_alias, pair.new.id == new.default_alias
    moved = [
        part
        for part in ("database", "schema", "alias")
        if _effective(old, part, pair.dialect, mine, was, new.target_database)
        != _effective(new, part, pair.dialect, mine, now, new.target_database)
        and not (part == "alias" and renamed and not old.alias and not new.alias)
    ]
    if not moved:
        return
    said = ", ".join(f"{p} {_shown(old, p, mine)} -> {_shown(new, p, mine)}" for p in moved)
    macros = [_MACRO[p] for p in moved if _MACRO[p] in mine]
    how = (
        f"; the final name is computed from it by the project's own {' and '.join(macros)}"
        if macros
        else ""
    )
    if "database" in moved:
        how += _target_said(old, new, mine)
    pair.emit(
        rules.MODEL_RELATION_CHANGED,
        f"dataset '{pair.new.id}' is built into another relation: {said}{how}; readers "
        "through dbt's ref() follow, readers that name the table (SQL outside dbt, "
        "dashboards, other repositories) break",
        before=", ".join(f"{p}={_shown(old, p, mine)}" for p in moved),
        after=", ".join(f"{p}={_shown(new, p, mine)}" for p in moved),
        old_dataset=pair.old.id if pair.old.id != pair.new.id else None,
    )


def _named_once(servers: Sequence[Server]) -> dict[str, Server]:
    """Servers by name; a name given twice (an ODCS list allows it) names neither."""
    count: dict[str, int] = {}
    for server in servers:
        count[server.name] = count.get(server.name, 0) + 1
    return {s.name: s for s in servers if count[s.name] == 1}


def _server_moves(
    old: Server, new: Server, dialect: str, tables: tuple[str, str] = ("", "")
) -> list[tuple[str, str, str]]:
    """(part, before, after) for each location part both sides name differently.

    A part written on one side only, a placeholder, or another case where every
    engine involved folds it, is no move the gate can vouch for. A server whose
    engine changed (postgres -> snowflake) together with its database or schema
    moved the data: readers querying the old location break. Its engine alone
    changing, the location restated, is no move. ``tables`` (base, HEAD) fill
    DCS's ``{model}`` in a files location: it names each model's own folder, so
    ``s3://b/data/{model}/`` -> ``s3://b/raw/{model}/`` moves every model."""
    # A type written on one side only is the engine of both (unsaid is not changed).
    typed = {_engine(s, dialect) for s in (old, new) if s.type} or {_engine(new, dialect)}
    fold = typed <= _CASE_FOLDING
    before, after = dict(old.location), dict(new.location)
    moves = []
    for part, was in before.items():
        now = after.get(part)
        if now is None:
            continue
        seen_was, seen_now = was, now
        if part in FILE_KEYS:  # compared as the places they name
            was = _files_place(was.replace(_MODEL, tables[0]))
            now = _files_place(now.replace(_MODEL, tables[1]))
        same = _same_folded if fold and part not in FILE_KEYS else operator.eq
        if (
            _placeholders_differ(was, now, same)
            if _TEMPLATE & set(was + now)
            else not same(was, now)
        ):
            moves.append((part, seen_was, seen_now))
    return moves


def _same_folded(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


def _engines_shown(old: str | None, new: str | None) -> str:
    """`` (postgres)``, or `` (postgres -> snowflake)`` for a server that changed engine."""
    said = [k for k in ((old or "").strip().casefold(), (new or "").strip().casefold()) if k]
    kinds = [_ENGINE.get(k, k) for k in said]
    if len(set(kinds)) > 1:
        return f" ({old} -> {new})"
    return f" ({new or old})" if kinds else ""


def _servers_moved(pair: DatasetPair) -> None:
    """A DCS/ODCS dataset whose server, present on both sides under one name, now
    keeps it in another catalog, project, database, schema, dataset, or files
    location: readers that name the table there break. A server added or
    removed moves no table readers had (a contract that stops naming its server
    says nothing new about where the table is)."""
    before = _named_once(pair.old.servers)
    found = []
    for name, new in _named_once(pair.new.servers).items():
        old = before.get(name)
        tables = (pair.old.id, pair.new.id)
        moves = _server_moves(old, new, pair.dialect, tables) if old is not None else []
        if moves:
            found.append((new, moves))
    if not found:
        return
    engines = {name: s.type for name, s in before.items() if s.type}
    said = "; ".join(
        f"server '{server.name}'"
        + _engines_shown(engines.get(server.name), server.type)
        + ": "
        + ", ".join(f"{part} '{was}' -> '{now}'" for part, was, now in moves)
        for server, moves in found
    )
    pair.emit(
        rules.MODEL_RELATION_CHANGED,
        f"dataset '{pair.new.id}' is served from another location: {said}; readers that "
        "name the table there (SQL, dashboards, other repositories) break",
        line=found[0][0].line,
        before="; ".join(
            f"{s.name}: " + ", ".join(f"{p}='{w}'" for p, w, _n in m) for s, m in found
        ),
        after="; ".join(
            f"{s.name}: " + ", ".join(f"{p}='{n}'" for p, _w, n in m) for s, m in found
        ),
        old_dataset=pair.old.id if pair.old.id != pair.new.id else None,
    )


def added(out: Emitter, new: Dataset, dialect: str) -> None:
    out.emit(rules.MODEL_ADDED, new, f"dataset '{new.id}' was added")
    unknown_types(out, new, new.columns, "", dialect)


def file_missing(out: Emitter, new: Dataset) -> None:
    """A guarded dbt properties entry with no model file: dbt builds nothing and only warns."""
    if new.enforced and new.model_file_missing:
        names = " or ".join(f"{n}.sql/.py" for n in new.model_names) or "its model file"
        out.emit(
            rules.MODEL_FILE_MISSING,
            new,
            f"dataset '{new.id}' has no model file ({names}) in its project's model "
            "paths: dbt builds nothing for this properties entry and only warns",
        )


def enforcement_removed(out: Emitter, new: Dataset) -> None:
    out.emit(
        rules.CONTRACT_ENFORCEMENT_REMOVED,
        new,
        f"dataset '{new.id}' no longer enforces its contract",
        before="enforced",
        after="not enforced",
    )


def enforcement_added(out: Emitter, new: Dataset, dialect: str) -> None:
    """The base model guaranteed nothing: its documented columns are no promise a
    reader relied on, so they are not compared (issue #21); only new types are checked."""
    out.emit(
        rules.CONTRACT_ENFORCEMENT_ADDED,
        new,
        f"dataset '{new.id}' now enforces its contract",
        before="not enforced",
        after="enforced",
    )
    unknown_types(out, new, new.columns, "", dialect)


def removed(
    out: Emitter,
    old: Dataset,
    disabled: Dataset | None,
    orphan: Dataset | None,
    now: datetime | None,
    never_built: bool = False,
) -> None:
    """A guarded dataset that is gone (or disabled), following dbt's ``same_contract_removed``:
    past its ``deprecation_date`` the removal was announced, so it is no break.

    ``orphan`` is the HEAD properties entry of a dbt model whose model file was
    deleted: dbt builds nothing for it, so the model is gone all the same.

    ``never_built``: a dbt entry that had no model file at the base, in a project
    that commits its model files, described a model dbt never built (it only
    warned, ``NoNodeForYamlKey``; the gate said ``model_file_missing``): no
    ``ref()`` to it compiled and no table of it existed, so removing or disabling
    the entry, which is how that warning is fixed, breaks no reader. It stays the
    ``model_file_missing`` warning. (In a project with no model file in sight, the
    files may be generated at build time: there the removal still blocks.)
    """
    where = disabled or orphan or old
    verb = "disabled" if disabled is not None else "removed"
    deadline = old.deprecation_date
    if never_built:
        out.emit(
            rules.MODEL_FILE_MISSING,
            where,
            f"dataset '{old.id}' was {verb}; it had no model file at the base, so dbt built "
            "nothing for it and no reader of it can break",
        )
    elif now is not None and deadline is not None and deadline < now:
        out.emit(
            rules.MODEL_REMOVED_AFTER_DEPRECATION,
            where,
            f"dataset '{old.id}' was {verb} after its deprecation date ({deadline.isoformat()})",
            before=deadline.isoformat(),
        )
    elif disabled is not None:
        out.emit(
            rules.MODEL_DISABLED,
            disabled,
            f"dataset '{old.id}' was disabled (enabled: false); dbt no longer builds it and "
            "its consumers will break",
            before="enabled",
            after="disabled",
        )
    elif orphan is not None:
        out.emit(
            rules.MODEL_REMOVED,
            orphan,
            f"dataset '{old.id}' was removed: its model file {old.model_file} was deleted while "
            f"its properties entry remains, so dbt no longer builds it (dbt only warns) and "
            "its consumers will break; delete the properties entry too, or restore the file",
        )
    else:
        out.emit(
            rules.MODEL_REMOVED, old, f"dataset '{old.id}' was removed; its consumers will break"
        )


def latest_moves(out: Emitter, base: Sequence[Dataset], head: Sequence[Dataset]) -> None:
    """An unpinned name (dbt ``ref('orders')``) that now resolves to another version.

    dbt marks both versions modified but raises no contract error: each version
    keeps its own relation, yet every unpinned consumer now reads other columns.
    """
    before = {d.unpinned_name: d for d in base if d.unpinned_name}
    for new in head:
        old = before.get(new.unpinned_name) if new.unpinned_name else None
        if old is None or old.id == new.id or not (old.enforced or new.enforced):
            continue
        out.emit(
            rules.LATEST_VERSION_CHANGED,
            new,
            f"unpinned references to '{new.unpinned_name}' now read '{new.id}' (was '{old.id}')",
            before=old.id,
            after=new.id,
        )


def unevaluable(out: Emitter, old: Dataset, new: Dataset) -> None:
    """A dbt ``enabled``/``contract.enforced`` that became an expression the gate
    cannot evaluate (or another one): read as true, so say so rather than pass."""
    before = {(setting, expression) for setting, expression, _p, _l in old.unevaluable}
    for setting, expression, path, line in new.unevaluable:
        if (setting, expression) in before:
            continue
        if setting == "access":  # only a public model can be narrowed (gate.diff.access)
            if old.access != "public":
                continue
            detail = (
                "whether other projects may still ref() this public model depends on an "
                "expression the gate cannot evaluate"
            )
        else:
            detail = (
                "enforcement now depends on an expression the gate cannot evaluate "
                "(read as true: the model stays guarded)"
            )
        out.emit(
            rules.DBT_CONFIG_UNEVALUABLE,
            new,
            f"dataset '{new.id}': {setting} is now '{expression}': {detail}",
            path=path,
            line=line,
            after=expression,
        )
