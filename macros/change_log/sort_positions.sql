{#- The SQL side of the sort positions of docs/decisions/001; the Python side is
    python_udfs/json_values.py (`pos_uint` and its kin), and tests/e2e/test_sort_positions.py
    ties the two. -#}

{#- An unsigned position part as `pos_uint` writes it: zero-padded to `width` digits, so that
    text order is numeric order. -#}
{% macro position_uint(value, width) -%}
    lpad(cast({{ value }} as string), {{ width }}, '0')
{%- endmacro %}


{#- The first part of a version's sort_key: the key's running source time (epoch microseconds,
    `mono_ts`), offset so that times up to 9,500 years before 1970 keep their order, in 18
    digits. -#}
{% macro position_source_time(micros) -%}
    {{ position_uint('coalesce(' ~ micros ~ ', 0) + 300000000000000000', 18) }}
{%- endmacro %}
