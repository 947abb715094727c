{#- docs/guarantees.md, "The marts": a key's versions, in source order (sort_key), have valid_from
    <= valid_to, do not overlap, never go back in time, and only the last one may be open
    (is_current). -#}
{% test history_intervals_are_ordered(model) %}

with versions as (
    select
        *,
        lead(valid_from) over key_order as next_valid_from,
        lead(sort_key) over key_order as next_sort_key
    from {{ model }}
    window key_order as (
        partition by source_system, source_name, source_table, key_json
        order by sort_key
    )
),

final as (
    select * from versions
    where
        valid_to < valid_from
        or is_current != (valid_to is null)
        or (next_sort_key is not null and valid_to is null)
        or next_valid_from < valid_to
        or next_valid_from < valid_from
)

select * from final

{% endtest %}
