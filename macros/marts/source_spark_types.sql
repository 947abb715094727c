{#- Column name -> the Spark type a typed model reads it as (int_cdc__column_types). -#}
{% macro source_spark_types(source) -%}
    {%- set types_relation = load_relation(ref('int_cdc__column_types')) -%}
    {%- if not execute or types_relation is none -%}
        {{ return({}) }}
    {%- endif -%}
    {%- set typed = run_query(
        "select column_name, spark_type from " ~ types_relation
        ~ " where " ~ typed_source_filter(source)
    ) -%}
    {%- set types = {} -%}
    {%- for row in typed.rows -%}
        {%- do types.update({row[0]: row[1]}) -%}
    {%- endfor -%}
    {{ return(types) }}
{%- endmacro %}
