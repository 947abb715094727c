{#- docs/guarantees.md, "The marts": the current row of a key is its open history version, and every
    open version is a current row. -#}
{% test current_matches_open_version(model, history) %}

with open_versions as (
    select * from {{ rows_under_test(history) }}
    where is_current
),

final as (
    select
        coalesce(current_rows.key_json, open_versions.key_json) as key_json,
        current_rows.row_json as current_row_json,
        open_versions.row_json as history_row_json
    from {{ model }} as current_rows
    full outer join open_versions
        on
            {{ same_key('current_rows', 'open_versions') }}
    where
        current_rows.key_json is null
        or open_versions.key_json is null
        or not current_rows.row_json <=> open_versions.row_json
        or not current_rows.unavailable_columns <=> open_versions.unavailable_columns
        or not current_rows.sort_key <=> open_versions.sort_key
)

select * from final

{% endtest %}
