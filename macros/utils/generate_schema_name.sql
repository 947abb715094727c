{#- Internal layers get fixed schema names (cdc_staging, cdc_internal), behind an optional
    prefix (env CDC_SCHEMA_PREFIX) so that pipelines sharing one metastore keep apart; the marts
    stay in the target schema so analysts find cdc_current, cdc_history and cdc_quarantine
    unqualified. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ env_var('CDC_SCHEMA_PREFIX', '') }}{{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
