{% macro typed_history() -%}
    {{ typed_table(ref('cdc_history'), 'history') }}
{%- endmacro %}
