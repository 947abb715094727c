{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        partition_by=['landing_run'],
    )
}}

{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with new_lines as (
    select * from {{ ref('stg_datastream__lines') }}
    where landing_run > {{ processed_through }}
),

flattened as (
    select
        new_lines.*,
        datastream_flatten(line, source_name) as change
    from new_lines
),

final as (
    select
        source_name,
        file_path,
        line_number,
        coalesce(load_error, change.error) as error,
        case when load_error is not null or change.error is not null then line end as raw_line,
        change.source_type,
        change.read_method,
        change.source_table,
        change.key_json,
        change.op,
        change.row_image,
        change.is_full_image,
        change.is_backfill,
        change.order_ts,
        change.sort_pos,
        timestamp_micros(change.committed_at) as committed_at,
        change.txn_id,
        change.event_id,
        landed_at,
        landing_run
    from flattened
)

select * from final
