{#- Contract §2: an unknown value is never NULL and never a placeholder. A column listed in
    unavailable_columns must be absent from row_json, and no source placeholder
    (var cdc_unavailable_placeholders) may appear anywhere in row_json. -#}
{% test no_unknown_value_leaks(model) %}

    {%- set placeholders = var('cdc_unavailable_placeholders', ['__debezium_unavailable_value']) %}

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
{%- for placeholder in placeholders %}
            or instr(row_json, '{{ placeholder }}') > 0
        {%- endfor %}
)

select * from final

{% endtest %}
