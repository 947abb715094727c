{{
    config(
        partition_by=['landing_run'],
        on_schema_change='append_new_columns',
        pre_hook="{{ finer_scan_splits() }}",
        post_hook="{{ default_scan_splits() }}",
    )
}}

{#- Every Debezium record of new landing runs decoded by the `debezium_flatten` UDF
    (python_udfs/debezium/), unavailable values told from the configured placeholders: a
    change-log row with its column types and transaction metadata, a BEGIN or END record's
    transaction fields, or the reason it is quarantined. -#}
{%- set processed_through = landing_runs_processed() %}

with new_lines as (
    select * from {{ ref('stg_debezium__lines') }}
    where landing_run > {{ processed_through }}
),

decoded_lines as (
    select
        new_lines.*,
        debezium_flatten(
            new_lines.line, new_lines.source_name, {{ unavailable_placeholders() }}
        ) as decoded
    from new_lines
),

final as (
    select
        {{ decoded_change_columns('decoded_lines', 'decoded', [
            'column_types',
            'transaction_key',
            'data_collection_order',
            'transaction_status',
            'transaction_event_count',
            'transaction_collections',
        ]) }}
    from decoded_lines
)

select * from final
