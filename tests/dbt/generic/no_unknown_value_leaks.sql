{#- docs/guarantees.md, "The marts": an unknown value is never NULL and never a placeholder. A
    column listed in unavailable_columns must be absent from row_json, and no source placeholder
    (var cdc_unavailable_placeholders), nor its base64 form, may appear in row_json. -#}
{% test no_unknown_value_leaks(model) %}

with rows_with_columns as (
    select
        *,
        from_json(row_json, 'map<string,string>') as row_columns
    from {{ model }}
),

final as (
    select * from rows_with_columns
    where
        row_json is null
        or unavailable_columns is null
        or exists(unavailable_columns, c -> map_contains_key(row_columns, c))
        or exists(
            {{ unavailable_placeholders() }},
            placeholder -> instr(row_json, placeholder) > 0
            or instr(row_json, base64(placeholder)) > 0
        )
)

select * from final

{% endtest %}
