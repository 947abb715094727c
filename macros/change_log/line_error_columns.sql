{#- A decoded line's error and text, for the quarantine: the line's load error, else the error
    its decoder returned in `row` (a prefix such as `lines.decoded.`), and the line's text only
    when it has one of them. Two columns, joined by `separator`. -#}
{% macro line_error_columns(line, row, separator=', ') -%}
    coalesce({{ line }}load_error, {{ row }}error) as error{{ separator -}}
    if({{ line }}load_error is null and {{ row }}error is null, null, {{ line }}line) as raw_line
{%- endmacro %}
