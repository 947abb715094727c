{{ config(materialized='view') }}

{#- The partition graph of each stream: a partition is known once it is announced by a parent's
    child_partitions_record or has landed rows of its own (the initial query's partition has a
    NULL token). It is open until its own child_partitions_record lands; its progress is the
    latest timestamp it reported, at least the start its parent announced. -#}
with partition_reports as (
    select * from {{ ref('int_spanner__partition_reports') }}
),

final as (
    select
        source_name,
        partition_token,
        first(parent_tokens, true) as parent_tokens,
        min(announced_start_ts) as announced_start_ts,
        max(reported_through_ts) as reported_through_ts,
        {{ spanner_partition_progress('reported_through_ts', 'announced_start_ts') }}
            as progress_ts,
        bool_or(has_finished) as is_finished,
        min(landing_run) as first_landing_run,
        max(landing_run) as last_landing_run
    from partition_reports
    group by source_name, partition_token
)

select * from final
