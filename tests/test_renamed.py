"""Module names the README once documented still import, as the very same module."""

from __future__ import annotations

import subprocess
import sys


def test_gate_types_is_the_lattice() -> None:
    import gate.types
    from gate.types import compare

    import gate.lattice

    assert gate.types is gate.lattice
    assert compare("bigint", "int").change.value == "narrowed"


def test_the_old_name_does_not_shadow_the_standard_library() -> None:
    # The old module sat at gate/types.py; with gate/ on sys.path, `import types`
    # found it. Run from the repository root so that gate/ really is on the path.
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = (
        "import sys; sys.path.insert(0, 'gate'); sys.modules.pop('types', None); "
        "import types; print(types.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert not out.stdout.strip().startswith(str(root / "gate"))
    assert not (root / "gate" / "types.py").exists()


def test_no_module_or_folder_is_named_like_the_standard_library() -> None:
    """``gate/types.py`` once shadowed ``types`` for anything run with ``gate/`` on the path."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "gate"
    clashes = [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if "__pycache__" not in path.parts
        and (path.suffix == ".py" or path.is_dir())
        and path.stem in sys.stdlib_module_names
    ]
    assert clashes == []
