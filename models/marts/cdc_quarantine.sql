{{
    config(
        materialized='incremental',
        incremental_strategy='append',
    )
}}

{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with datastream_rejects as (
    {{ rejected_lines(ref('int_datastream__events'), 'datastream', processed_through) }}
),

debezium_rejects as (
    {{ rejected_lines(ref('int_debezium__events'), 'debezium', processed_through) }}
),

pgoutput_message_rejects as (
    {{ rejected_lines(ref('int_pgoutput__messages'), 'pgoutput', processed_through) }}
),

pgoutput_change_rejects as (
    {{ rejected_lines(ref('int_pgoutput__changes'), 'pgoutput', processed_through) }}
),

spanner_rejects as (
    {{ rejected_lines(ref('int_spanner__records'), 'spanner', processed_through) }}
),

final as (
    select * from datastream_rejects
    union all
    select * from debezium_rejects
    union all
    select * from pgoutput_message_rejects
    union all
    select * from pgoutput_change_rejects
    union all
    select * from spanner_rejects
)

select * from final
