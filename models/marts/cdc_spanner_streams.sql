{{ config(materialized='table') }}

{#- For operators: where each Spanner change stream stands. Changes above the low watermark and
    transactions still missing records wait; a partition that stops reporting holds the
    watermark back, and shows here as the lagging one. -#}
with watermarks as (
    select * from {{ ref('int_spanner__watermarks') }}
),

open_partitions as (
    select
        source_name,
        sort_array(
            collect_list(struct(progress_ts, partition_token))
        ) as by_progress,
        min_by(partition_token, progress_ts) as lagging_partition_token
    from {{ ref('int_spanner__partitions') }}
    where not is_finished
    group by source_name
),

pending_transactions as (
    select * from {{ ref('int_spanner__pending_transactions') }}
    where
        as_of_landing_run = {{
            max_processed(ref('int_spanner__pending_transactions'), 'as_of_landing_run')
        }}
        and server_transaction_id is not null
),

pending_counts as (
    select
        source_name,
        count_if(landed_records < records_in_transaction) as incomplete_transactions,
        count_if(landed_records >= records_in_transaction) as waiting_transactions,
        min(case when landed_records < records_in_transaction then commit_ts end)
            as oldest_incomplete_commit_ts
    from pending_transactions
    group by source_name
),

applied_counts as (
    select
        source_name,
        count(*) as applied_transactions
    from {{ ref('int_spanner__transactions') }}
    group by source_name
),

final as (
    select
        watermarks.source_name,
        watermarks.last_landing_run,
        open_partitions.lagging_partition_token,
        cast(watermarks.open_partitions as int) as open_partitions,
        cast(watermarks.finished_partitions as int) as finished_partitions,
        cast(coalesce(applied_counts.applied_transactions, 0) as int)
            as applied_transactions,
        cast(coalesce(pending_counts.incomplete_transactions, 0) as int)
            as incomplete_transactions,
        cast(coalesce(pending_counts.waiting_transactions, 0) as int)
            as waiting_transactions,
        timestamp_micros(watermarks.low_watermark_ts) as low_watermark,
        transform(
            open_partitions.by_progress,
            open_partition -> named_struct(
                'partition_token', open_partition.partition_token,
                'reported_through', timestamp_micros(open_partition.progress_ts)
            )
        ) as open_partition_progress,
        timestamp_micros(pending_counts.oldest_incomplete_commit_ts)
            as oldest_incomplete_committed_at
    from watermarks
    left join open_partitions
        on watermarks.source_name = open_partitions.source_name
    left join applied_counts
        on watermarks.source_name = applied_counts.source_name
    left join pending_counts
        on watermarks.source_name = pending_counts.source_name
)

select * from final
