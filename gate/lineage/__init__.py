"""Who reads a dataset beyond the first in-repo reader (issue #25).

Two directions, one vocabulary: downstream lineage inside the repository (the
models that pass a changed column on) and consumers outside it (dbt Mesh
manifests of other projects, OpenLineage run events or a lineage API). Both are
reported beside the in-repo readers; neither raises ``consumer_broken``,
because the gate cannot see their code change in this pull request.
"""
