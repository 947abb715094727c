{{ config(materialized='view') }}

with events as (
    select * from {{ ref('int_datastream__events') }}
    where error is null
),

final as (
    select
        'datastream' as source_system,
        source_name,
        source_table,
        key_json,
        op,
        row_image,
        is_full_image,
        is_backfill,
        order_ts,
        sort_pos,
        committed_at,
        txn_id,
        event_id,
        file_path,
        line_number,
        landing_run
    from events
)

select * from final
