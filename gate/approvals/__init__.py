"""Approval of breaking changes by the owners of what breaks (issue #23).

fingerprint: a stable id per change; codeowners: GitHub's CODEOWNERS, parsed
and matched; owners/policy/decide: who must approve, and whether they did.
"""
