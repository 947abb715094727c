{{ config(materialized='view') }}

{#- The type each source column is read as by the typed models (macros/marts/typed_table.sql) and
    written with by `cdcw generate-typed-models`: the one Spark type of the source types it was
    seen with, string when they differ or the source named none. Rows of files without types
    (Datastream JSON beside Avro files of the same table) name no type and count for nothing. -#}

with named_types as (
    select * from {{ ref('cdc_source_columns') }}
    where source_type is not null
),

column_names as (
    select distinct
        source_system,
        source_name,
        source_table,
        column_name
    from {{ ref('cdc_source_columns') }}
),

resolved_types as (
    select
        source_system,
        source_name,
        source_table,
        column_name,
        max_by(source_type, last_seen_landing_run) as source_type,
        if(count(distinct spark_type) = 1, max(spark_type), 'string') as spark_type
    from named_types
    group by source_system, source_name, source_table, column_name
),

final as (
    select
        column_names.source_system,
        column_names.source_name,
        column_names.source_table,
        column_names.column_name,
        resolved_types.source_type,
        coalesce(resolved_types.spark_type, 'string') as spark_type
    from column_names
    left join resolved_types
        on
            column_names.source_system = resolved_types.source_system
            and column_names.source_name = resolved_types.source_name
            and column_names.source_table = resolved_types.source_table
            and column_names.column_name = resolved_types.column_name
)

select * from final
