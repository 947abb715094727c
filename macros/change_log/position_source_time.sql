{#- The first part of a version's sort_key: the key's running source time (epoch microseconds,
    `mono_ts`), offset so that times up to 9,500 years before 1970 keep their order, in 18
    digits. -#}
{% macro position_source_time(micros) -%}
    {{ position_uint('coalesce(' ~ micros ~ ', 0) + 300000000000000000', 18) }}
{%- endmacro %}
