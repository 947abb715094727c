{% macro in_values(column, values) -%}
    {%- if values | length == 0 -%}
        false
    {%- else -%}
        {{ column }} in ({{ values | join(", ") }})
    {%- endif -%}
{%- endmacro %}
