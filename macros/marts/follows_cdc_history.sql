{#- Whether a relation's rows carry last_landing_run from cdc_history: the two marts and every
    typed model (one with meta.cdc_source). `graph` is empty while dbt parses. -#}
{% macro follows_cdc_history(relation) -%}
    {%- if relation.identifier in ['cdc_history', 'cdc_current'] -%}
        {{ return(true) }}
    {%- endif -%}
    {%- for node in graph.get('nodes', {}).values() -%}
        {%- if node.resource_type == 'model' and node.alias == relation.identifier
            and node.config.meta.get('cdc_source') -%}
            {{ return(true) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(false) }}
{%- endmacro %}
