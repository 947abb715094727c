{#- The SQL side of the sort positions of docs/decisions/001; the Python side is
    python_udfs/json_values.py (`pos_uint` and its kin), and tests/e2e/test_sort_positions.py
    ties the two. -#}

{#- An unsigned position part as `pos_uint` writes it: zero-padded to `width` digits, so that
    text order is numeric order. -#}
{% macro position_uint(value, width) -%}
    lpad(cast({{ value }} as string), {{ width }}, '0')
{%- endmacro %}
