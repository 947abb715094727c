{#- A family's good changes of keys in the unified change-log shape. Rows without an op (e.g.
    Debezium tombstones) are not changes; truncates apply to whole tables (int_cdc__truncates). -#}
{% macro keyed_changes(events, source_system) -%}
with events as (
    select * from {{ events }}
    where error is null and op is not null and op != 'truncate'
),

final as (
    select
        {{ change_log_select('events', {'source_system': "'" ~ source_system ~ "'"}) }}
    from events
)

select * from final
{%- endmacro %}
