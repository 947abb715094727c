{#- Whether a row image leaves a column unknown (an unchanged TOAST value, a partial image). -#}
{% macro image_has_unknown_values(image) -%}
    exists(map_values({{ image }}), v -> v is null)
{%- endmacro %}
