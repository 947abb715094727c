{#- Internal layers get fixed schema names (cdc_staging, cdc_internal); the marts stay in the
    target schema so analysts find cdc_current, cdc_history and cdc_quarantine unqualified. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
