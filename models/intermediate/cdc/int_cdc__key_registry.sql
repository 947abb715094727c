{#- Each key gets a partition (key_cohort) for life, grouping keys by when they were first seen:
    recent activity stays in recent partitions, so a run reads few of them
    (docs/decisions/002-key-cohort-partitions.md, 006-delta-lake.md). -#}
{%- set seen_through = max_processed(this, 'first_landing_run') if is_incremental() else -1 %}
{%- set last_key_seq = max_processed(this, 'key_seq', 0) if is_incremental() else 0 %}

with new_changes as (
    select * from {{ ref('int_cdc__source_changes') }}
    where landing_run > {{ seen_through }}
),

new_keys as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        min(landing_run) as first_landing_run
    from new_changes
    group by source_system, source_name, source_table, key_json
),

unregistered_keys as (
    select new_keys.*
    from
        new_keys
    {%- if is_incremental() %}
        left anti join {{ this }} as registered
            on
                {{ same_key('new_keys', 'registered') }}
    {%- endif %}
),

numbered_keys as (
    select
        *,
        {{ last_key_seq }} + row_number() over (
            order by first_landing_run, source_system, source_name, source_table, key_json
        ) as key_seq
    from unregistered_keys
),

final as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        first_landing_run,
        key_seq,
        cast(floor((key_seq - 1) / {{ var('cdc_keys_per_partition') }}) as int) as key_cohort
    from numbered_keys
)

select * from final
