"""JSON events structured into ``openlineage-python``'s generated classes (a test helper).

The client builds and serialises events but reads none back: it has no
``from_dict``, no cattrs converter (checked in 1.54.0). This walks the attrs
fields of its generated classes instead, by their type hints: every required
field must be there with the right JSON type, lists and maps are entered,
``eventType`` must be one of the spec's states, the classes' own attrs
validators run (an ISO ``eventTime`` with a time, URI fields), and each facet is
structured into the class its ``_schemaURL`` names (``...#/$defs/<Class>``),
or, where that URL names none (the client's own example event has
``http://test.schema.url``), the class of the spec's standard facet key
(``KEYS``), its extra properties kept as the client keeps them
(``with_additional_properties``; a property whose name is no Python identifier,
such as Spark's ``spark-version``, it cannot hold: those are returned in
``dropped``). A facet class the client does not have (a producer's own facet,
such as Spark's ``spark_properties``) is structured into the base facet class
of its place (``RunFacet``...), which requires ``_producer`` and ``_schemaURL``.
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
import types
import typing
from typing import Any

import attr
from openlineage.client import generated
from openlineage.client.generated.base import BaseFacet


class Unstructured(Exception):
    """The JSON does not fit the generated classes; the message names where."""


def _facet_classes() -> dict[str, type]:
    found: dict[str, type] = {}
    for module in pkgutil.iter_modules(generated.__path__):
        loaded = importlib.import_module(f"{generated.__name__}.{module.name}")
        for value in vars(loaded).values():
            if isinstance(value, type) and issubclass(value, BaseFacet) and attr.has(value):
                found[value._get_schema().rsplit("/", 1)[-1]] = value  # type: ignore[attr-defined]
    return found


FACETS = _facet_classes()

#: The spec's standard facet keys -> the generated classes that may sit there.
KEYS = {
    "nominalTime": ["NominalTimeRunFacet"],
    "parent": ["ParentRunFacet"],
    "processing_engine": ["ProcessingEngineRunFacet"],
    "errorMessage": ["ErrorMessageRunFacet"],
    "tags": ["TagsRunFacet", "TagsJobFacet", "TagsDatasetFacet"],
    "jobType": ["JobTypeJobFacet"],
    "sql": ["SQLJobFacet"],
    "sourceCodeLocation": ["SourceCodeLocationJobFacet"],
    "documentation": ["DocumentationJobFacet", "DocumentationDatasetFacet"],
    "ownership": ["OwnershipJobFacet", "OwnershipDatasetFacet"],
    "schema": ["SchemaDatasetFacet"],
    "dataSource": ["DatasourceDatasetFacet"],
    "columnLineage": ["ColumnLineageDatasetFacet"],
    "symlinks": ["SymlinksDatasetFacet"],
    "catalog": ["CatalogDatasetFacet"],
    "storage": ["StorageDatasetFacet"],
    "version": ["DatasetVersionDatasetFacet"],
    "lifecycleStateChange": ["LifecycleStateChangeDatasetFacet"],
    "dataQualityMetrics": ["DataQualityMetricsInputDatasetFacet", "DataQualityMetricsDatasetFacet"],
    "dataQualityAssertions": ["DataQualityAssertionsDatasetFacet"],
}


def structure(cls: type, data: Any, where: str = "$", dropped: list[str] | None = None) -> Any:
    """``data`` (parsed JSON) as an instance of the attrs class ``cls``.

    ``dropped`` collects the paths of the properties the client cannot hold."""
    dropped = [] if dropped is None else dropped
    if not isinstance(data, dict):
        raise Unstructured(f"{where}: {cls.__name__} is an object, not {type(data).__name__}")
    attr.resolve_types(cls)
    kwargs: dict[str, Any] = {}
    known = set()
    for field in attr.fields(cls):
        known.add(field.name)
        if not field.init:  # schemaURL/_schemaURL: the class's own, checked by the caller
            continue
        if field.name not in data:
            if field.default is attr.NOTHING:
                raise Unstructured(f"{where}: {cls.__name__} needs '{field.name}'")
            continue
        kwargs[field.alias] = _value(field.type, data[field.name], f"{where}.{field.name}", dropped)
    extra = {k: v for k, v in data.items() if k not in known}
    try:
        made = cls(**kwargs)
    except (TypeError, ValueError) as exc:  # the generated validators
        raise Unstructured(f"{where}: {cls.__name__}: {exc}") from None
    if extra:
        if not issubclass(cls, BaseFacet):  # facets may carry more; the core objects not
            raise Unstructured(f"{where}: {cls.__name__} has no {sorted(extra)}")
        dropped += [f"{where}.{k}" for k in extra if not k.isidentifier()]
        made = made.with_additional_properties(
            **{k: v for k, v in extra.items() if k.isidentifier()}
        )
    return made


def _value(hint: Any, value: Any, where: str, dropped: list[str]) -> Any:
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is None:
            return None
        if len(options) != 1:
            raise Unstructured(f"{where}: no single type in {hint}")
        return _value(options[0], value, where, dropped)
    if origin is list:
        if not isinstance(value, list):
            raise Unstructured(f"{where}: a list, not {type(value).__name__}")
        (item,) = typing.get_args(hint)
        return [_value(item, v, f"{where}[{i}]", dropped) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise Unstructured(f"{where}: an object, not {type(value).__name__}")
        _key, item = typing.get_args(hint)
        return {k: _value(item, v, f"{where}.{k}", dropped) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, BaseFacet):
        return structure(_facet_class(hint, value, where), value, where, dropped)
    if isinstance(hint, type) and attr.has(hint):
        return structure(hint, value, where, dropped)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise Unstructured(f"{where}: {value!r} is no {hint.__name__}") from None
    if hint is Any:
        return value
    wanted = {str: (str,), int: (int,), float: (int, float), bool: (bool,)}.get(hint)
    if wanted is None:
        raise Unstructured(f"{where}: unexpected type {hint}")
    if not isinstance(value, wanted) or (hint is not bool and isinstance(value, bool)):
        raise Unstructured(f"{where}: a {hint.__name__}, not {type(value).__name__}")
    return value


def _facet_class(place: type, value: Any, where: str) -> type:
    """The generated class a facet's ``_schemaURL`` names, if it belongs in ``place``."""
    url = value.get("_schemaURL") if isinstance(value, dict) else None
    if not isinstance(url, str) or "_producer" not in value:
        raise Unstructured(f"{where}: a facet needs '_producer' and '_schemaURL'")
    named = FACETS.get(url.rsplit("/", 1)[-1])
    if named is not None and issubclass(named, place):
        return named
    for name in KEYS.get(where.rsplit(".", 1)[-1], ()):
        if issubclass(FACETS[name], place):
            return FACETS[name]
    return place
