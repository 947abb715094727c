{#- The configured placeholder strings (var cdc_unavailable_placeholders) as a SQL array. -#}
{% macro unavailable_placeholders() -%}
    array(
    {%- for placeholder in var('cdc_unavailable_placeholders') -%}
        '{{ placeholder | replace("'", "\\'") }}'{{ ", " if not loop.last }}
    {%- endfor -%}
    )
{%- endmacro %}
