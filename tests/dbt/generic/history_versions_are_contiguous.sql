{#- docs/guarantees.md, "The marts": a key's versions follow each other without gaps: the next
    version starts exactly when the previous one ends, unless a delete closed it (then the key was
    absent in between), and exactly one version is open per live key. -#}
{% test history_versions_are_contiguous(model, current_state) %}

with versions as (
    select
        *,
        lead(valid_from) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key
        ) as next_valid_from
    from {{ model }}
),

gaps as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        'gap or overlap between versions' as problem
    from versions
    where
        next_valid_from is not null
        and not closed_by_delete
        and valid_to != next_valid_from
),

open_versions as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        count_if(is_current) as open_count
    from {{ model }}
    group by source_system, source_name, source_table, key_json
),

live_keys as (
    select
        source_system,
        source_name,
        source_table,
        key_json
    from {{ rows_under_test(current_state) }}
),

wrong_open_counts as (
    select
        open_versions.source_system,
        open_versions.source_name,
        open_versions.source_table,
        open_versions.key_json,
        'live keys need exactly one open version, others none' as problem
    from open_versions
    left join live_keys
        on
            {{ same_key('open_versions', 'live_keys') }}
    where open_versions.open_count != if(live_keys.key_json is null, 0, 1)
),

final as (
    select * from gaps
    union all
    select * from wrong_open_counts
)

select * from final

{% endtest %}
