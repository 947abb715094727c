{#- Whether `relation` has `column` (a table of an earlier version may not have it yet: dbt's
    on_schema_change adds it only after the model's query ran). -#}
{% macro relation_has_column(relation, column) -%}
    {%- if not execute -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name') | list -%}
    {{ return(column in names) }}
{%- endmacro %}
