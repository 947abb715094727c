{#- Per landing run, what each partition reported (the latest timestamp it reached, whether it
    finished by announcing its children) and which partitions were announced: a few rows per
    partition, so the watermark never rescans the records. -#}
{%- set processed_through = landing_runs_processed() %}

with new_records as (
    select * from {{ ref('int_spanner__records') }}
    where record_kind is not null and landing_run > {{ processed_through }}
),

own_reports as (
    select
        source_name,
        partition_token,
        landing_run,
        max(record_ts) as reported_through_ts,
        bool_or(record_kind = 'child_partitions') as has_finished,
        cast(null as bigint) as announced_start_ts,
        cast(null as array<string>) as parent_tokens
    from new_records
    group by source_name, partition_token, landing_run
),

announcements as (
    select
        source_name,
        child_token as partition_token,
        landing_run,
        cast(null as bigint) as reported_through_ts,
        false as has_finished,
        min(record_ts) as announced_start_ts,
        first(parent_tokens) as parent_tokens
    from new_records
    where record_kind = 'child_partitions' and child_token is not null
    group by source_name, child_token, landing_run
),

final as (
    select * from own_reports
    union all
    select * from announcements
)

select * from final
