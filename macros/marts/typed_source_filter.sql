{% macro typed_source_filter(source) -%}
    source_system = '{{ source.source_system }}'
    and source_table = '{{ source.source_table }}'
    {%- if source.source_name %}
        and source_name = '{{ source.source_name }}'
    {%- endif %}
{%- endmacro %}
