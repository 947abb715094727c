{#- The primary key changes of the keys a run recomputes: successor and predecessor key. -#}
{% macro history_key_successions(changed_keys, touched, changed_keys_hint) -%}
    select distinct
        successions.source_system,
        successions.source_name,
        successions.source_table,
        successions.key_json,
        successions.predecessor_key_json,
        successions.sort_pos
    from {{ ref('int_cdc__key_successions') }} as successions
    {%- if is_incremental() %}
        where
            {{ in_values('successions.key_cohort', touched) }}
            and {{ key_is_changed('successions', changed_keys, changed_keys_hint) }}
    {%- endif %}
{%- endmacro %}
