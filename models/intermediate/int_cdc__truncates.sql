{{
    config(
        materialized='incremental',
        incremental_strategy='append',
    )
}}

{#- Truncates delete every key of their table at their position; they are kept apart from the
    keyed change log because they name no key. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with debezium_truncates as (
    select
        'debezium' as source_system,
        source_name,
        source_table,
        sort_pos,
        committed_at,
        txn_id,
        event_id,
        landing_run
    from {{ ref('int_debezium__events') }}
    where
        error is null
        and op = 'truncate'
        and landing_run > {{ processed_through }}
),

final as (
    select * from debezium_truncates
)

select * from final
