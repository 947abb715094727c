{#- The keys whose history a run must recompute: keys with new changes, every key of a table a
    new truncate emptied, the successors of a primary key change whose half landed or whose
    old key changed (their unknown values continue the old key's), and the keys of a Spanner
    table that has a column seen for the first time. Returned as SQL, with
    each key's partition. -#}
{% macro history_changed_keys(processed_through) -%}
    select source_system, source_name, source_table, key_json, key_cohort
    from {{ ref('int_cdc__change_log') }}
    where landing_run > {{ processed_through }}
    union
    select registry.source_system, registry.source_name, registry.source_table, registry.key_json,
        registry.key_cohort
    from {{ ref('int_cdc__key_registry') }} as registry
    inner join {{ ref('int_cdc__truncates') }} as truncates
        on
            registry.source_system = truncates.source_system
            and registry.source_name = truncates.source_name
            and registry.source_table = truncates.source_table
    where truncates.landing_run > {{ processed_through }}
    union
    select successions.source_system, successions.source_name, successions.source_table,
        successions.key_json, successions.key_cohort
    from {{ ref('int_cdc__key_successions') }} as successions
    left semi join {{ ref('int_cdc__change_log') }} as predecessor_changes
        on
            {{ same_key('successions', 'predecessor_changes', left_key='predecessor_key_json') }}
            and predecessor_changes.landing_run > {{ processed_through }}
    union
    select source_system, source_name, source_table, key_json, key_cohort
    from {{ ref('int_cdc__key_successions') }}
    where landing_run > {{ processed_through }}
    {%- set new_column_condition = 'landing_run > ' ~ processed_through %}
    {%- if count_rows(ref('int_spanner__table_columns'), new_column_condition) | int > 0 %}
        union
        -- A Spanner table's images are completed with its columns as known when they are: a
        -- column seen for the first time counts in every earlier image of the table.
        select
            change_log.source_system,
            change_log.source_name,
            change_log.source_table,
            change_log.key_json,
            change_log.key_cohort
        from {{ ref('int_cdc__change_log') }} as change_log
        left semi join (
            select source_name, source_table
            from {{ ref('int_spanner__table_columns') }}
            where {{ new_column_condition }}
        ) as widened_tables
            on
                change_log.source_system = 'spanner'
                and change_log.source_name = widened_tables.source_name
                and change_log.source_table = widened_tables.source_table
    {%- endif %}
{%- endmacro %}
