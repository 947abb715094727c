{#- The columns a row image names but cannot give a value for, sorted. -#}
{% macro unavailable_columns_of_image(image) -%}
    array_sort(map_keys(map_filter({{ image }}, (k, v) -> v is null)))
{%- endmacro %}
