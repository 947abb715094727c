{% macro typed_value(column_name, data_type) -%}
    {%- set value = "row_values['" ~ column_name ~ "']" -%}
    {%- if data_type | lower == 'binary' -%}
        try_to_binary({{ value }}, 'base64')
    {%- else -%}
        try_cast({{ value }} as {{ data_type }})
    {%- endif -%}
{%- endmacro %}
