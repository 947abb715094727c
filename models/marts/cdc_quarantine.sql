{{
    config(
        materialized='incremental',
        incremental_strategy='append',
    )
}}

{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with datastream_rejects as (
    select
        'datastream' as source_system,
        source_name,
        file_path,
        line_number,
        error as reason,
        raw_line,
        landed_at,
        landing_run
    from {{ ref('int_datastream__events') }}
    where error is not null and landing_run > {{ processed_through }}
),

final as (
    select * from datastream_rejects
)

select * from final
