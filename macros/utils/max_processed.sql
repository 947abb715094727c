{#- Incremental models learn what they already hold with a query run at compile time: the
    watermark and partition lists become literals, so Spark prunes partitions by them. -#}

{% macro max_processed(relation, column, default=-1) -%}
    {%- if not execute -%}
        {{ return(default) }}
    {%- endif -%}
    {%- set result = run_query("select max(" ~ column ~ ") from " ~ relation) -%}
    {%- set value = result.columns[0].values()[0] -%}
    {{ return(default if value is none else value) }}
{%- endmacro %}
