"""Safe, line-aware YAML loading for contract files.

Contract files are untrusted input from a pull request, so loading must be safe
(no object construction), bounded (an alias bomb is refused, not walked) and
precise (every error names the file and the line). Parsed mappings and lists
remember where they start and where each key or item is, so findings and
annotations can point at the line a reviewer should look at.

Scalars follow YAML 1.2's core schema for booleans: only ``true``/``false`` are
booleans, so a column named ``on``, ``off``, ``yes`` or ``no`` stays a string,
as it does in the tools that consume these contracts.
"""

from __future__ import annotations

import contextlib
import operator
import re
from collections.abc import Iterable
from typing import Any

import yaml

from gate.limits import DEFAULT_LIMITS
from gate.model import ContractError

try:  # The C parser is several times faster; fall back where libyaml is absent.
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _BaseLoader = yaml.SafeLoader  # type: ignore[assignment,misc]

#: Upper bound on the nodes a document may expand to, as a multiple of its size.
#: Real contracts expand to far fewer nodes than they have bytes; an alias bomb
#: expands exponentially and hits this bound after a few milliseconds of work.
_EXPANSION_PER_BYTE = 4
_EXPANSION_FLOOR = 100_000

#: Upper bound on the characters of text (keys and string values) a document may
#: expand to. Counting nodes is not enough: one 10 KB string reused 90,000 times
#: is few nodes but 900 MB for whoever serialises it. Anchors in real contracts
#: share small check blocks, a few times the file size at most.
_TEXT_PER_BYTE = 8
_TEXT_FLOOR = 1_000_000

#: How deeply collections may nest. Real contracts nest about ten levels (a DCS
#: field 64 levels deep, the formats' own limit, takes about 130); libyaml's
#: composer recurses in C and kills the process (SIGSEGV) somewhere past 30,000.
MAX_DEPTH = 256

#: Below this bound on the nesting (see ``_nesting_bound``) composing cannot get
#: near the C stack's limit, so the extra pass over the events is skipped.
_EVENT_SCAN_FROM = 2_000


class YMap(dict):
    """A mapping that remembers its own line and the line of each key."""

    line: int
    key_lines: dict[Any, int]

    def key_line(self, key: Any) -> int:
        """Line of ``key`` in the file, or the mapping's own line."""
        return self.key_lines.get(key, self.line)


class YList(list):
    """A list that remembers its own line and the line of each item."""

    line: int
    item_lines: list[int]

    def item_line(self, index: int) -> int:
        """Line of item ``index`` in the file, or the list's own line."""
        if 0 <= index < len(self.item_lines):
            return self.item_lines[index]
        return self.line


class _TooManyNodes(Exception):
    """Raised from inside the composer when a document exceeds its node budget."""


class _Loader(_BaseLoader):
    """Safe loader with YAML 1.2 booleans and line-aware containers.

    It counts the nodes it composes: the composer asks ``resolve`` for the tag of
    every node without an explicit tag, so the count costs nothing extra and
    stops a huge document before it is built (an explicit tag per node costs the
    attacker more bytes than it saves, and bytes are bounded too).
    """

    nodes_left: int = 2**62
    #: Key/value pairs merge keys (``<<: *base``) may still copy into mappings.
    merged_left: int = 2**62
    #: Where duplicate keys are recorded (key, line) instead of refused; ``None``
    #: refuses them (``load_yaml``'s ``duplicate_keys``).
    duplicate_keys: list[tuple[str, int]] | None = None

    # The composer calls these two around every node, to keep the state of path
    # resolvers. This loader has none (its own empty table, whatever a host
    # program adds to PyYAML's), so they are C callables that ignore their
    # arguments: two Python calls less per node, ~10% of a contract's load (#26).
    yaml_path_resolvers: dict[Any, Any] = {}  # noqa: RUF012
    descend_resolver = operator.is_  # type: ignore[assignment]  # (parent, index): ignored
    ascend_resolver = tuple  # type: ignore[assignment]  # (): ignored

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        self.nodes_left -= 1
        if self.nodes_left < 0:
            raise _TooManyNodes
        if kind is not yaml.ScalarNode or len(value) > _MEMO_MAX_LEN:
            return super().resolve(kind, value, implicit)
        # A scalar's tag depends only on its text and how it was written (there
        # are no path resolvers), and contracts repeat the same few words: a
        # regex pass per scalar was a fifth of the parse.
        key = (value, implicit)
        tag = _SCALAR_TAGS.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_SCALAR_TAGS) >= _MEMO_MAX_ENTRIES:
                _SCALAR_TAGS.clear()  # untrusted text: the memo stays small
            _SCALAR_TAGS[key] = tag
        return tag


#: Resolved tags of short scalars, bounded in entries and key length.
_SCALAR_TAGS: dict[tuple[str, Any], str] = {}
_MEMO_MAX_LEN = 64
_MEMO_MAX_ENTRIES = 8192


# YAML 1.1 reads yes/no/on/off as booleans; contracts mean the words.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"


def _reject_duplicate_keys(
    node: yaml.MappingNode, sink: list[tuple[str, int]] | None = None, loader: Any = None
) -> None:
    """Refuse a key written twice in one mapping, or record it in ``sink``.

    PyYAML keeps the last value silently, so a DCS ``fields`` map listing ``id``
    twice would lose a column without a word. Merged keys (``<<: *base``) may be
    overridden on purpose, so only keys written in this mapping count. A caller
    that reads the file as a tool that keeps the last value does (dbt) passes a
    ``sink`` and decides afterwards, once it knows the format.
    """
    seen: set[str] = set()
    #: Keys other than strings as Python builds them: ``1``, ``1.0``, ``0x1`` and
    #: ``true`` are one dict key (the last wins), though their texts differ.
    built: set[Any] = set()
    for key_node, _value in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
            continue
        again = key_node.value in seen
        if key_node.tag != _STR and loader is not None:
            with contextlib.suppress(ValueError, yaml.YAMLError):  # _build names it
                key = loader.construct_object(key_node)
                again = again or key in built
                built.add(key)
        if again:
            if sink is not None:
                sink.append((str(key_node.value), key_node.start_mark.line + 1))
                continue
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key '{key_node.value}'", key_node.start_mark
            )
        seen.add(key_node.value)


def _first_sentence(exc: Exception) -> str:
    return str(exc).split(";")[0].split(": value has")[0]


def _build(loader: _Loader, node: yaml.Node, memo: dict[int, Any]) -> Any:
    """Turn a composed node into plain values with line-aware containers.

    This replaces PyYAML's generator-based constructor, which dominated the run
    time of large pull requests. Strings (most scalars) are taken as they are;
    other scalars go through the safe constructor. Only standard tags are
    accepted on containers, so nothing but plain data can come out. An alias is
    the same node, built once and shared, exactly as PyYAML does.
    """
    built = memo.get(id(node))
    if built is not None:
        return built
    if isinstance(node, yaml.ScalarNode):
        try:
            value = node.value if node.tag == _STR else loader.construct_object(node)
        except ValueError as exc:  # int('1' * 5000): Python refuses over 4,300 digits
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read the value: {_first_sentence(exc)}", node.start_mark
            ) from None
        memo[id(node)] = value
        return value
    if isinstance(node, yaml.SequenceNode):
        if node.tag != _SEQ:
            raise yaml.constructor.ConstructorError(
                None, None, f"unsupported tag {node.tag}", node.start_mark
            )
        items = YList()
        items.line = node.start_mark.line + 1
        items.item_lines = [child.start_mark.line + 1 for child in node.value]
        memo[id(node)] = items
        items.extend(
            child.value
            if child.__class__ is yaml.ScalarNode and child.tag == _STR
            else _build(loader, child, memo)
            for child in node.value
        )
        return items
    if not isinstance(node, yaml.MappingNode) or node.tag != _MAP:
        raise yaml.constructor.ConstructorError(
            None, None, f"unsupported tag {node.tag}", node.start_mark
        )
    mapping = YMap()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    memo[id(node)] = mapping
    _reject_duplicate_keys(node, loader.duplicate_keys, loader)
    if any(key.tag == _MERGE for key, _value in node.value):
        _flatten(loader, node)
    key_lines = mapping.key_lines
    for key_node, value_node in node.value:
        # Plain strings (most keys and values) are taken as they are, without a call.
        if key_node.__class__ is yaml.ScalarNode and key_node.tag == _STR:
            key = key_node.value
        else:
            key = _build(loader, key_node, memo)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "found an unhashable key", key_node.start_mark
                ) from None
        if value_node.__class__ is yaml.ScalarNode and value_node.tag == _STR:
            mapping[key] = value_node.value
        else:
            mapping[key] = _build(loader, value_node, memo)
        key_lines[key] = key_node.start_mark.line + 1
    return mapping


class _MergedTooMuch(Exception):
    """Merge keys would copy more pairs than the file's budget (``_flatten``)."""


def _flatten(loader: _Loader, node: yaml.MappingNode) -> None:
    """PyYAML's ``flatten_mapping``, once what it copies is counted.

    Each ``<<: *previous`` copies every pair the previous mapping holds, so a
    chain of 8,000 (350 KB) is 32 million pairs: built, ~20 s of CPU, before the
    walk of ``_check_expansion`` could refuse them. The sources are flattened
    first (an anchor comes before its aliases, so they mostly are already), the
    pairs they would give are counted against the walk's budget, and only then
    are they copied."""
    for key, value in node.value:
        if key.tag != _MERGE:
            continue
        sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                continue  # PyYAML names the error
            if any(k.tag == _MERGE for k, _v in source.value):
                _flatten(loader, source)
            loader.merged_left -= len(source.value)
    if loader.merged_left < 0:
        raise _MergedTooMuch
    loader.flatten_mapping(node)


def _too_deep(path: str, line: int | None = None) -> ContractError:
    return ContractError(path, f"YAML nests too deeply (more than {MAX_DEPTH} levels)", line)


def _nesting_bound(text: str) -> int:
    """A cheap upper bound on how deeply ``text`` can nest collections cheaply.

    Every level costs a flow bracket or a compact block indicator (``- - - x``);
    levels made of indentation alone cost quadratic bytes, so the contract size
    limit keeps them far from the C stack's limit.
    """
    return sum(text.count(mark) for mark in ("[", "{", "- ", "-\t", "? ", "?\t"))


def _check_depth(text: str, path: str, max_nodes: int = 2**62) -> None:
    """Refuse deep nesting from the parser's events, before anything recurses.

    libyaml's parser keeps its state on the heap; only the composer recurses.
    Walking the events is iterative, so this pass is safe at any depth. It
    stops at the node budget too, so it never costs more than the load.
    """
    loader = _BaseLoader(text)
    depth = 0
    try:
        while (event := _next_event(loader, path)) is not None:
            if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                max_nodes -= 1
            elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                max_nodes -= 1
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    raise _too_deep(path, mark.line + 1 if mark else None)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.StreamEndEvent):
                break
            if max_nodes < 0:
                raise _TooManyNodes
    finally:
        loader.dispose()


#: What libyaml says (PyYAML 6.0.4 and later) when its own nesting limit,
#: deeper than ours, stops the scanner before our count reaches MAX_DEPTH: the
#: scanner reads ahead of the events in flow collections.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


def _next_event(loader: Any, path: str) -> Any:
    try:
        return loader.get_event()
    except yaml.MarkedYAMLError as exc:
        if exc.problem != _LIBYAML_TOO_DEEP:
            raise
        raise _too_deep(path, _line(exc)) from None


def _line(exc: yaml.MarkedYAMLError) -> int | None:
    mark = exc.problem_mark or exc.context_mark
    return mark.line + 1 if mark is not None else None


def _aliases_too_deep(text: str, path: str) -> ContractError:
    """The loaded value nests too deeply: in the text itself, or through aliases."""
    _check_depth(text, path)  # raises, with the line, when the text nests too deeply
    return ContractError(
        path,
        f"YAML aliases expand too far (nesting more than {MAX_DEPTH} levels, "
        "a recursive alias?); refusing to load",
    )


def _check_expansion(root: Any, text: str, path: str) -> None:
    """Walk the loaded value as consumers will, refusing expansion and depth.

    PyYAML builds aliases as shared references, so loading a "billion laughs"
    document is cheap; walking it is not. Every visit (shared or not) counts
    against a node budget and every key and string against a text budget, both
    proportional to the file size, which stops a bomb early. The walk also
    measures depth, which aliases can add to.
    """
    node_budget = max(_EXPANSION_FLOOR, _EXPANSION_PER_BYTE * len(text))
    text_budget = max(_TEXT_FLOOR, _TEXT_PER_BYTE * len(text))
    if not isinstance(root, (dict, list)):
        root = [root]  # one walk for every shape; the wrapper is not counted
        seen = -1
    else:
        seen = 0
    stack: list[tuple[dict[Any, Any] | list[Any], int]] = [(root, 0)]
    chars = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if depth >= MAX_DEPTH:
            raise _aliases_too_deep(text, path)
        children: Iterable[Any] = value
        if isinstance(value, dict):
            chars += sum(len(key) for key in value if isinstance(key, str))
            children = value.values()
        # Leaves are counted here rather than pushed: most values are strings.
        for item in children:
            if isinstance(item, (dict, list)):
                stack.append((item, depth + 1))
            else:
                seen += 1
                if isinstance(item, str):
                    chars += len(item)
        if seen > node_budget or chars > text_budget:
            raise ContractError(
                path, "YAML aliases expand too far (possible alias bomb); refusing to load"
            )


def load_yaml(
    data: bytes | str,
    path: str,
    max_nodes: int | None = None,
    duplicate_keys: list[tuple[str, int]] | None = None,
) -> Any:
    """Parse one YAML document from an untrusted contract file.

    Raises ``ContractError`` naming ``path`` (and the line where YAML reports
    one) for binary content, syntax errors, several documents in one file,
    deep nesting, more than ``max_nodes`` nodes and alias bombs. An empty file
    loads as ``None``; callers decide if that is an error. A key written twice
    in one mapping is refused too, unless ``duplicate_keys`` is given: then the
    last value wins (as PyYAML and dbt keep it) and each repeat is recorded
    there as (key, line).
    """
    if max_nodes is None:
        max_nodes = DEFAULT_LIMITS.yaml_nodes
    if isinstance(data, bytes):
        if b"\x00" in data:
            raise ContractError(path, "binary content, not a YAML text file")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ContractError(
                path, f"not valid UTF-8 (byte {exc.start}); contracts must be UTF-8 text"
            ) from None
    else:
        text = data
    loader = _Loader(text)
    loader.nodes_left = max_nodes
    loader.merged_left = max(_EXPANSION_FLOOR, _EXPANSION_PER_BYTE * len(text))
    loader.duplicate_keys = duplicate_keys
    nesting = _nesting_bound(text)  # counted once: the event scan and the walk ask
    try:
        if nesting >= _EVENT_SCAN_FROM:
            with contextlib.suppress(yaml.YAMLError):  # reported by the real load below
                _check_depth(text, path, max_nodes)
        node = loader.get_single_node()
        value = None if node is None else _build(loader, node, {})
    except yaml.MarkedYAMLError as exc:
        line = _line(exc)
        if exc.problem == _LIBYAML_TOO_DEEP:
            raise _too_deep(path, line) from None
        problem = exc.problem or exc.context or "invalid YAML"
        raise ContractError(path, f"invalid YAML: {problem}", line) from None
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid YAML"
        raise ContractError(path, f"invalid YAML: {first}") from None
    except _MergedTooMuch:
        raise ContractError(
            path, "YAML aliases expand too far (possible alias bomb); refusing to load"
        ) from None
    except _TooManyNodes:
        raise ContractError(
            path,
            f"more than {max_nodes:,} YAML nodes; split the file or raise limits.yaml_nodes "
            "in the config",
        ) from None
    except RecursionError:
        _check_depth(text, path)  # names the line where it gets too deep
        raise _too_deep(path) from None
    finally:
        loader.dispose()
    if _may_expand(text, nesting):
        _check_expansion(value, text, path)
    return value


def _may_expand(text: str, nesting: int) -> bool:
    """Whether the loaded value can be larger or deeper than the text shows.

    Only aliases (and merge keys, which are aliases) share nodes, and both need
    a ``*``. Without one the node count was bounded while composing, strings
    are no longer than the text, and nesting is bounded by the lines plus the
    indicators ``_nesting_bound`` counts (a line opens at most one level
    without one): most contracts skip the walk, a tenth of their parse.
    ``nesting`` is ``_nesting_bound(text)``.
    """
    return "*" in text or text.count("\n") + nesting + 1 >= MAX_DEPTH


def line_of(value: Any, key: Any = None, default: int | None = None) -> int | None:
    """Best line for ``value`` (or for ``key`` inside it), tolerant of plain values."""
    if isinstance(value, YMap):
        return value.key_line(key) if key is not None else value.line
    if isinstance(value, YList):
        return value.item_line(key) if isinstance(key, int) else value.line
    return default
