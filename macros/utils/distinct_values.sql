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
