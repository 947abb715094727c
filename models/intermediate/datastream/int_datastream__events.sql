{{
    config(
        partition_by=['landing_run'],
        on_schema_change='append_new_columns',
        pre_hook="{{ finer_scan_splits() }}",
        post_hook="{{ default_scan_splits() }}",
    )
}}

{#- Every Datastream line of new landing runs decoded by the `datastream_flatten` UDF
    (python_udfs/datastream/): a change-log row with the source's type, read method, key basis
    and column types, or the reason it is quarantined. -#}
{%- set processed_through = landing_runs_processed() %}

with new_lines as (
    select * from {{ ref('stg_datastream__lines') }}
    where landing_run > {{ processed_through }}
),

decoded_lines as (
    select
        new_lines.*,
        datastream_flatten(new_lines.line, new_lines.source_name) as decoded
    from new_lines
),

final as (
    select
        {{ decoded_change_columns(
            'decoded_lines', 'decoded', ['source_type', 'read_method', 'key_basis', 'column_types']
        ) }}
    from decoded_lines
)

select * from final
