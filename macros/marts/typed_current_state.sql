{% macro typed_current_state() -%}
    {{ typed_table(ref('cdc_current'), 'current') }}
{%- endmacro %}
