{#- A landed line as the decoders read it, and its load error: files are read as bytes, and a
    line that is not UTF-8 would fail the decoders' Arrow batch (and with it the run), so it is
    made valid here and quarantined by its load error. -#}
{% macro valid_utf8_line(line, load_error) -%}
    make_valid_utf8({{ line }}) as line,
        coalesce(
            {{ load_error }},
            case
                when not is_valid_utf8({{ line }})
                    then 'not valid UTF-8 (invalid bytes shown as U+FFFD in the line)'
            end
        ) as load_error
{%- endmacro %}
