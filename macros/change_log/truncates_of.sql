{#- A family's truncates (they name a table, not a key) for int_cdc__truncates. -#}
{% macro truncates_of(events, source_system, processed_through) -%}
    select
        '{{ source_system }}' as source_system,
        source_name,
        source_table,
        sort_pos,
        committed_at,
        txn_id,
        event_id,
        landing_run
    from {{ events }}
    where error is null and op = 'truncate' and landing_run > {{ processed_through }}
{%- endmacro %}
