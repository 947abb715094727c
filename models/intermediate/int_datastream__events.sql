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
        datastream_flatten(new_lines.line, new_lines.source_name) as flattened_event
    from new_lines
),

final as (
    select
        flattened.source_name,
        flattened.file_path,
        flattened.line_number,
        flattened.flattened_event.source_type,
        flattened.flattened_event.read_method,
        flattened.flattened_event.source_table,
        flattened.flattened_event.key_json,
        flattened.flattened_event.op,
        flattened.flattened_event.row_image,
        flattened.flattened_event.is_full_image,
        flattened.flattened_event.is_backfill,
        flattened.flattened_event.order_ts,
        flattened.flattened_event.sort_pos,
        flattened.flattened_event.txn_id,
        flattened.flattened_event.event_id,
        flattened.landed_at,
        flattened.landing_run,
        timestamp_micros(flattened.flattened_event.committed_at) as committed_at,
        coalesce(flattened.load_error, flattened.flattened_event.error) as error,
        case
            when
                flattened.load_error is not null
                or flattened.flattened_event.error is not null
                then flattened.line
        end as raw_line
    from flattened
)

select * from final
