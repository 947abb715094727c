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
