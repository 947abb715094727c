{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=[
            'source_system', 'source_name', 'source_table', 'column_name', 'source_type'
        ],
        merge_null_safe_keys=true,
        post_hook="{{ row_rules_constraint(
            'source_column_rows_hold_their_values',
            not_null=[
                'source_system', 'source_name', 'source_table', 'column_name', 'spark_type',
                'first_seen_landing_run', 'last_seen_landing_run',
            ],
        ) }}",
    )
}}

{#- Every column each source has named, with the type it gave it
    (python_udfs/<family>/column_types.py) and the landing runs in which that was first and
    last seen. A column added upstream starts after its table; one dropped stops being seen; one
    retyped gets a row per type. Rows of a source that carries no types (Datastream JSON,
    Debezium without the schema envelope) name the columns only. A run reads only the landing
    runs after the newest it has seen, of the families its build processes. -#}
{%- set seen_through = landing_runs_processed('last_seen_landing_run') %}
{%- set typed_changes = built_source_families('typed_changes') %}
{%- set own_column_types = built_source_families('own_column_types') %}

-- A family that names its types on every decoded change (`source_families`), of the families
-- this build processes.
with change_events as (
    {%- for item in typed_changes %}
        {%- set family, model = item.split(':') %}
        select
            '{{ family }}' as source_system,
            source_name,
            source_table,
            column_types,
            row_image,
            landing_run
        from {{ ref(model) }}
        where
            landing_run > {{ seen_through }}
            and error is null
            and source_table is not null
            and op != 'truncate'
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
    {%- if not typed_changes %}
        select
            cast(null as string) as source_system,
            cast(null as string) as source_name,
            cast(null as string) as source_table,
            cast(null as string) as column_types,
            cast(null as map<string, string>) as row_image,
            cast(null as bigint) as landing_run
        where false
    {%- endif %}
),

-- Events without types name their columns by their image's keys.
named_events as (
    select
        *,
        if(column_types is null, array_sort(map_keys(row_image)), null) as column_names
    from change_events
),

event_schemas as (
    select
        source_system,
        source_name,
        source_table,
        column_types,
        column_names,
        min(landing_run) as first_seen_landing_run,
        max(landing_run) as last_seen_landing_run
    from named_events
    group by source_system, source_name, source_table, column_types, column_names
),

{%- if 'spanner' in own_column_types %}

    spanner_typed_rows as (
        -- Data change records name the columns they carry; a snapshot header names every column.
        select
            source_name,
            source_table,
            column_types,
            error,
            landing_run
        from {{ ref('int_spanner__records') }}
        where record_kind = 'data_change'
        union all
        select
            source_name,
            source_table,
            column_types,
            error,
            landing_run
        from {{ ref('int_spanner__snapshot_headers') }}
    ),

    spanner_schemas as (
        select
            'spanner' as source_system,
            source_name,
            source_table,
            column_types,
            cast(null as array<string>) as column_names,
            min(landing_run) as first_seen_landing_run,
            max(landing_run) as last_seen_landing_run
        from spanner_typed_rows
        where
            landing_run > {{ seen_through }}
            and error is null
            and column_types is not null
        group by source_name, source_table, column_types
    ),

{%- endif %}
{%- if 'pgoutput' in own_column_types %}

    pgoutput_typed_rows as (
        -- Relation messages name a table's columns and types, as a snapshot header does.
        select
            source_name,
            concat_ws(
                '.',
                get_json_object(relation_json, '$.namespace'),
                get_json_object(relation_json, '$.name')
            ) as source_table,
            column_types,
            error,
            landing_run
        from {{ ref('int_pgoutput__messages') }}
        where kind = 'relation'
        union all
        select
            source_name,
            source_table,
            column_types,
            error,
            landing_run
        from {{ ref('int_pgoutput__snapshot_headers') }}
    ),

    pgoutput_schemas as (
        select
            'pgoutput' as source_system,
            source_name,
            source_table,
            column_types,
            cast(null as array<string>) as column_names,
            min(landing_run) as first_seen_landing_run,
            max(landing_run) as last_seen_landing_run
        from pgoutput_typed_rows
        where
            landing_run > {{ seen_through }}
            and error is null
            and column_types is not null
        group by source_name, source_table, column_types
    ),

{%- endif %}

-- The others read theirs in a CTE of their own, `<family>_schemas`.
new_schemas as (
    select * from event_schemas
    {%- for family in own_column_types %}
        union all
        select * from {{ family }}_schemas
    {%- endfor %}
),

typed_columns as (
    select
        new_schemas.source_system,
        new_schemas.source_name,
        new_schemas.source_table,
        typed.column_name,
        typed.types[0] as source_type,
        typed.types[1] as spark_type,
        new_schemas.first_seen_landing_run,
        new_schemas.last_seen_landing_run
    from new_schemas
        lateral view explode(
            from_json(new_schemas.column_types, 'map<string,array<string>>')
        ) typed as column_name, types
    where new_schemas.column_types is not null
),

named_columns as (
    select
        new_schemas.source_system,
        new_schemas.source_name,
        new_schemas.source_table,
        named.column_name,
        cast(null as string) as source_type,
        'string' as spark_type,
        new_schemas.first_seen_landing_run,
        new_schemas.last_seen_landing_run
    from new_schemas
        lateral view explode(new_schemas.column_names) named as column_name
    where new_schemas.column_types is null
),

observed_columns as (
    select * from typed_columns
    union all
    select * from named_columns
),

new_columns as (
    select
        source_system,
        source_name,
        source_table,
        column_name,
        source_type,
        max(spark_type) as spark_type,
        min(first_seen_landing_run) as first_seen_landing_run,
        max(last_seen_landing_run) as last_seen_landing_run
    from observed_columns
    group by source_system, source_name, source_table, column_name, source_type
),

known_columns as (
    {%- if is_incremental() %}
        select * from {{ this }}
    {%- else %}
        select * from new_columns
        where false
    {%- endif %}
),

seen_before as (
    select
        new_columns.source_system,
        new_columns.source_name,
        new_columns.source_table,
        new_columns.column_name,
        new_columns.source_type,
        new_columns.spark_type,
        new_columns.last_seen_landing_run,
        least(
            new_columns.first_seen_landing_run,
            coalesce(known_columns.first_seen_landing_run, new_columns.first_seen_landing_run)
        ) as first_seen_landing_run
    from new_columns
    left join known_columns
        on
            new_columns.source_system = known_columns.source_system
            and new_columns.source_name = known_columns.source_name
            and new_columns.source_table = known_columns.source_table
            and new_columns.column_name = known_columns.column_name
            and new_columns.source_type <=> known_columns.source_type
),

final as (
    select
        source_system,
        source_name,
        source_table,
        column_name,
        source_type,
        spark_type,
        first_seen_landing_run,
        last_seen_landing_run
    from seen_before
)

select * from final
