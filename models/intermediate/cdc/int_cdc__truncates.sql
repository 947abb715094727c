{#- Truncates delete every key of their table at their position; they are kept apart from the
    keyed change log because they name no key. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with debezium_truncates as (
    {{ truncates_of(ref('int_debezium__events'), 'debezium', processed_through) }}
),

pgoutput_truncates as (
    {{ truncates_of(ref('int_pgoutput__changes'), 'pgoutput', processed_through) }}
),

final as (
    select * from debezium_truncates
    union all
    select * from pgoutput_truncates
)

select * from final
