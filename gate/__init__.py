"""schema-contract-gate: stop pull requests from silently breaking data contracts."""

__version__ = "0.1.0"
