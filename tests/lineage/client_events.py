"""OpenLineage run events built with the official Python client's generated classes.

``openlineage-python`` (test extra, pinned in pyproject.toml) ships the spec's
types as classes generated from the spec's JSON schemas
(``openlineage/client/generated/``: ``RunEvent``, ``InputDataset``,
``ColumnLineageDatasetFacet``...), each with the ``_schemaURL`` of the schema it
came from, and attrs validators on what the schemas constrain (an ISO
``eventTime`` with a time, URI fields). Built with them and serialised by the
client's own ``Serde.to_json``, an event has the spec's shape by construction,
not by a hand-written copy of it.

The shape is the one the OpenLineage Spark integration emits (its
``integration/spark`` expected events, see tests/lineage/data/README.md): the
producer is the integration's URL, jobs are named
``<app>.<command>.<output>``, inputs carry ``schema``, ``dataSource`` and
``symlinks`` facets (a path dataset and its catalog table), the output carries
``columnLineage`` with ``inputFields`` and ``transformations``, and the run the
``processing_engine`` facet. Namespaces as Spark names them: ``hdfs://host:port``
and ``file`` for paths, a metastore URI or catalog for tables.
"""

from __future__ import annotations

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.generated import (
    catalog_dataset,
    column_lineage_dataset,
    datasource_dataset,
    job_type_job,
    processing_engine_run,
    schema_dataset,
    sql_job,
    symlinks_dataset,
)
from openlineage.client.serde import Serde

#: The Spark integration's producer URL (its events' ``producer`` and every facet's ``_producer``).
SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.22.0/integration/spark"
HDFS = "hdfs://namenode:8020"
METASTORE = "hive://metastore:9083"
ORDERS_PATH = "/warehouse/analytics.db/stg_orders"
ORDERS_COLUMNS = [("order_id", "long"), ("customer_id", "long"), ("amount", "decimal(10,2)")]
ORDERS_COLUMNS += [("discount_code", "string"), ("ordered_at", "date")]

#: (job, the stg_orders columns its output's columnLineage names; None: no facet).
ENRICH = "orders_enrichment.execute_insert_into_hadoop_fs_relation_command.analytics_fct_orders"
COHORTS = "customer_cohorts.execute_create_data_source_table_as_select_command.analytics_cohorts"
EXPORT = "orders_export.execute_save_into_data_source_command.exports_orders"


def _input(namespace: str, name: str, table: tuple[str, str] | None) -> InputDataset:
    facets: dict[str, object] = {
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[
                schema_dataset.SchemaDatasetFacetFields(name=n, type=t) for n, t in ORDERS_COLUMNS
            ],
            producer=SPARK,
        ),
        "dataSource": datasource_dataset.DatasourceDatasetFacet(
            name=namespace, uri=namespace, producer=SPARK
        ),
    }
    if table is not None:
        facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(
            identifiers=[
                symlinks_dataset.Identifier(namespace=table[0], name=table[1], type="TABLE")
            ],
            producer=SPARK,
        )
    return InputDataset(namespace=namespace, name=name, facets=facets)  # type: ignore[arg-type]


def _field(
    namespace: str, name: str, column: str, kind: str, subtype: str
) -> column_lineage_dataset.InputField:
    return column_lineage_dataset.InputField(
        namespace=namespace,
        name=name,
        field=column,
        transformations=[column_lineage_dataset.Transformation(type=kind, subtype=subtype)],
    )


def _output(
    namespace: str, name: str, lineage: dict[str, list[column_lineage_dataset.InputField]] | None
) -> OutputDataset:
    facets: dict[str, object] = {
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name=c) for c in (lineage or {})],
            producer=SPARK,
        )
    }
    if lineage is not None:
        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
            fields={
                column: column_lineage_dataset.Fields(inputFields=inputs)
                for column, inputs in lineage.items()
            },
            producer=SPARK,
        )
    return OutputDataset(namespace=namespace, name=name, facets=facets)  # type: ignore[arg-type]


def _event(
    state: RunState,
    run_id: str,
    job: str,
    query: str,
    inputs: list[InputDataset],
    outputs: list[OutputDataset],
) -> RunEvent:
    engine = processing_engine_run.ProcessingEngineRunFacet(
        version="3.5.1", name="spark", openlineageAdapterVersion="1.22.0", producer=SPARK
    )
    job_facets = {
        "jobType": job_type_job.JobTypeJobFacet(
            processingType="BATCH", integration="SPARK", jobType="SQL_JOB", producer=SPARK
        ),
        "sql": sql_job.SQLJobFacet(query=query, dialect="spark", producer=SPARK),
    }
    return RunEvent(
        eventType=state,
        eventTime="2026-11-20T06:00:09.456Z",
        run=Run(runId=run_id, facets={"processing_engine": engine}),
        job=Job(namespace="spark_jobs", name=job, facets=job_facets),
        inputs=inputs,
        outputs=outputs,
        producer=SPARK,
    )


def spark_events() -> list[RunEvent]:
    """Three Spark jobs reading ``stg_orders``, as its OpenLineage integration reports them.

    - ``orders_enrichment`` reads it by its HDFS path (the Hive table in
      ``symlinks``) and its output's ``columnLineage`` derives ``discount`` from
      ``discount_code`` and ``net_amount`` from ``amount`` (START, then COMPLETE);
    - ``customer_cohorts`` reads it through the Hive metastore (a ``catalog``
      facet) and its lineage names ``customer_id`` and ``ordered_at`` only;
    - ``orders_export`` writes a file without column lineage: it may read any column.
    """
    path = (HDFS, ORDERS_PATH)
    table = (METASTORE, "analytics.stg_orders")
    enrich_out = _output(
        HDFS,
        "/warehouse/analytics.db/fct_orders",
        {
            "order_id": [_field(*path, "order_id", "DIRECT", "IDENTITY")],
            "discount": [_field(*path, "discount_code", "DIRECT", "IDENTITY")],
            "net_amount": [
                _field(*path, "amount", "DIRECT", "TRANSFORMATION"),
                _field(*path, "status", "INDIRECT", "FILTER"),
            ],
        },
    )
    cohorts_in = _input(*table, None)
    cohorts_in.facets["catalog"] = catalog_dataset.CatalogDatasetFacet(  # type: ignore[index]
        framework="hive", type="hive", name="spark_catalog", source="spark", producer=SPARK
    )
    cohorts_out = _output(
        "file",
        "/warehouse/analytics.db/cohorts",
        {
            "customer_id": [_field(*table, "customer_id", "DIRECT", "IDENTITY")],
            "cohort": [_field(*table, "ordered_at", "DIRECT", "TRANSFORMATION")],
        },
    )
    enrich_sql = "INSERT INTO analytics.fct_orders SELECT ... FROM analytics.stg_orders"
    return [
        _event(
            RunState.START,
            "0193a1b2-0000-7000-8000-0000000000e1",
            ENRICH,
            enrich_sql,
            [_input(*path, table)],
            [enrich_out],
        ),
        _event(
            RunState.COMPLETE,
            "0193a1b2-0000-7000-8000-0000000000e1",
            ENRICH,
            enrich_sql,
            [_input(*path, table)],
            [enrich_out],
        ),
        _event(
            RunState.COMPLETE,
            "0193a1b2-0000-7000-8000-0000000000c2",
            COHORTS,
            "CREATE TABLE analytics.cohorts AS SELECT ...",
            [cohorts_in],
            [cohorts_out],
        ),
        _event(
            RunState.COMPLETE,
            "0193a1b2-0000-7000-8000-000000000003",
            EXPORT,
            "df.write.parquet(...)",
            [_input("file", ORDERS_PATH, None)],
            [_output("file", "/exports/orders", None)],
        ),
    ]


def json_lines(events: list[RunEvent]) -> bytes:
    """A JSON Lines export as the client's file transport writes it (``Serde.to_json``)."""
    return "".join(Serde.to_json(e) + "\n" for e in events).encode()
