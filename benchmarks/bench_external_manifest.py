"""Cost of reading another dbt project's manifest.json for external consumers (issue #25).

Builds a manifest in the shape dbt writes (tests/lineage/dbt_mesh/) with N models
of a downstream project, R of which read one of K changed upstream models through
a cross-project ref (dbt style: a ``select *`` CTE, then named columns), and
times what the gate does with it in a run: the JSON parse, one pass over the
nodes, matching each upstream id to the contracts, and sqlglot over the compiled
SQL of the R readers only.

    python benchmarks/bench_external_manifest.py --models 5000 --changed 100 --readers 100
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from gate.lineage.dbt_mesh import read_manifest
from gate.lineage.matching import DatasetMatcher
from gate.model import Column, Dataset

SQL = """with src as (
    select * from "warehouse"."platform"."{upstream}"
),
other as (
    select * from "warehouse"."finance"."model_{other}"
)
select src.id, src.amount_{i}, sum(other.total) as total
from src left join other on src.id = other.id
group by 1, 2
"""


def manifest(models: int, changed: int, readers: int) -> bytes:
    nodes = {}
    for i in range(models):
        uid = f"model.finance.model_{i}"
        depends = [f"model.finance.model_{(i + 1) % models}"]
        upstream = None
        if i < readers:
            upstream = f"stg_{i % changed}"
            depends.append(f"model.platform.{upstream}")
        nodes[uid] = {
            "unique_id": uid,
            "name": f"model_{i}",
            "resource_type": "model",
            "package_name": "finance",
            "original_file_path": f"models/model_{i}.sql",
            "depends_on": {"macros": [], "nodes": depends},
            "relation_name": f'"warehouse"."finance"."model_{i}"',
            "compiled_code": SQL.format(upstream=upstream or f"model_{i}", other=i + 1, i=i),
        }
    for k in range(changed):
        uid = f"model.platform.stg_{k}"
        nodes[uid] = {
            "unique_id": uid,
            "name": f"stg_{k}",
            "resource_type": "model",
            "package_name": "platform",
            "relation_name": f'"warehouse"."platform"."stg_{k}"',
            "depends_on": {"nodes": []},
        }
    data = {"metadata": {"project_name": "finance", "adapter_type": "snowflake"}, "nodes": nodes}
    return json.dumps(data).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=5000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--readers", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = manifest(args.models, args.changed, args.readers)
    datasets = [
        Dataset(
            id=f"stg_{k}",
            path="models/_models.yml",
            format="dbt",
            project="platform",
            columns=(Column("id"), Column(f"amount_{k}")),
        )
        for k in range(args.changed)
    ]
    ids = {d.id for d in datasets}
    times = []
    for _ in range(args.repeat):
        start = time.process_time()
        matcher = DatasetMatcher(datasets)
        reads = read_manifest(data, "m.json", "spark", lambda u, m=matcher: bool(m.match(u) & ids))
        matcher.reads_of(reads)
        times.append(time.process_time() - start)
    print(
        f"{args.models} models, {len(data) / 1e6:.1f} MB, {len(reads)} external reads of "
        f"{args.changed} changed models: {statistics.median(times):.3f} CPU s "
        f"(median of {args.repeat})"
    )


if __name__ == "__main__":
    main()
