{#- docs/guarantees.md, "The marts": cdc_current holds one row per live key. -#}
{% test one_current_row_per_key(model) %}

with counted as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        count(*) as current_rows
    from {{ model }}
    group by source_system, source_name, source_table, key_json
),

final as (
    select * from counted
    where current_rows != 1
)

select * from final

{% endtest %}
