{#- Incremental models learn what they already hold with a query run at compile time, so the
    model's own SQL never reads the table it overwrites (Spark refuses that). -#}

{% macro max_processed(relation, column, default=-1) -%}
    {%- if not execute -%}
        {{ return(default) }}
    {%- endif -%}
    {%- set result = run_query("select max(" ~ column ~ ") from " ~ relation) -%}
    {%- set value = result.columns[0].values()[0] -%}
    {{ return(default if value is none else value) }}
{%- endmacro %}


{% macro distinct_values(relation, column, condition) -%}
    {%- if not execute -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set result = run_query(
        "select distinct " ~ column ~ " from " ~ relation ~ " where " ~ condition
        ~ " order by 1"
    ) -%}
    {{ return(result.columns[0].values() | list) }}
{%- endmacro %}


{% macro in_values(column, values) -%}
    {%- if values | length == 0 -%}
        false
    {%- else -%}
        {{ column }} in ({{ values | join(", ") }})
    {%- endif -%}
{%- endmacro %}


{#- Key partitions that received changes since this model last ran: the partitions a run
    recomputes. The model's rows carry last_landing_run, the newest landing run they reflect. -#}
{% macro touched_cohorts(upstream, upstream_run_column) -%}
    {%- if not execute -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set processed_through = max_processed(this, 'last_landing_run') -%}
    {{ return(distinct_values(
        upstream, 'key_cohort', upstream_run_column ~ ' > ' ~ processed_through
    )) }}
{%- endmacro %}


{#- cdc_history's partitions to recompute: those of keys with new changes, every partition
    holding keys of a table that a new truncate emptied, and those of keys whose primary key
    change was completed by a newly landed half. -#}
{% macro history_touched_cohorts() -%}
    {%- if not execute -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set processed_through = max_processed(this, 'last_landing_run') -%}
    {%- set changed = distinct_values(
        ref('int_cdc__change_log'), 'key_cohort', 'landing_run > ' ~ processed_through
    ) -%}
    {%- set truncated = distinct_values(
        "(select registry.key_cohort from " ~ ref('int_cdc__key_registry') ~ " as registry"
        ~ " inner join " ~ ref('int_cdc__truncates') ~ " as truncates"
        ~ " using (source_system, source_name, source_table)"
        ~ " where truncates.landing_run > " ~ processed_through ~ ") as truncated_keys",
        'key_cohort',
        'true'
    ) -%}
    {%- set succeeded = distinct_values(
        ref('int_cdc__key_successions'), 'key_cohort', 'landing_run > ' ~ processed_through
    ) -%}
    {{ return((changed + truncated + succeeded) | unique | list) }}
{%- endmacro %}
