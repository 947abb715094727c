{#- Rows of `relation` where `condition` holds, as a number (0 before execution). -#}
{% macro count_rows(relation, condition) -%}
    {%- if not execute -%}
        {{ return(0) }}
    {%- endif -%}
    {%- set result = run_query('select count(*) from ' ~ relation ~ ' where ' ~ condition) -%}
    {{ return(result.columns[0].values()[0] | int) }}
{%- endmacro %}
