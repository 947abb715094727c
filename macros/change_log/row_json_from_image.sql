{#- A row image (column -> canonical JSON text, NULL meaning unknown) as the marts' row_json:
    a JSON object of the known columns with keys sorted. Values are already JSON text, so they
    are spliced in rather than re-encoded. -#}
{% macro row_json_from_image(image) -%}
    concat(
        '{',
        array_join(
            transform(
                array_sort(map_keys(map_filter({{ image }}, (k, v) -> v is not null))),
                k -> concat(
                    substr(to_json(array(k)), 2, length(to_json(array(k))) - 2),
                    ':',
                    {{ image }}[k]
                )
            ),
            ','
        ),
        '}'
    )
{%- endmacro %}
