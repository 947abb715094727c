{#- A family's good changes of keys in the unified change-log shape, from its decoded `events`
    (a relation name). Rows without an op (e.g. Debezium tombstones) are not changes; truncates
    apply to whole tables (int_cdc__truncates). -#}
{% macro keyed_changes(events, source_system) -%}
select
        {{ change_log_select(events, {'source_system': "'" ~ source_system ~ "'"}) }}
    from {{ events }}
    where {{ events }}.error is null and {{ events }}.op is not null and {{ events }}.op != 'truncate'
{%- endmacro %}
