{{ config(materialized='table') }}

{#- For operators: where each Spanner change stream stands. Changes above the low watermark and
    transactions still missing records wait, and so do snapshot rows read above it; a partition
    that stops reporting holds the watermark back, and shows here as the lagging one. A stream
    whose only landed lines are snapshot files has no watermark yet: its rows wait. -#}
with watermarks as (
    select * from {{ ref('int_spanner__watermarks') }}
),

snapshot_batches as (
    select * from {{ ref('int_spanner__snapshot_batches') }}
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
    -- A snapshot batch is complete as it lands: it can only wait for the watermark.
    select
        pending_transactions.source_name,
        count_if(
            snapshot_batches.txn_id is null
            and pending_transactions.landed_records < pending_transactions.records_in_transaction
        ) as incomplete_transactions,
        count_if(
            snapshot_batches.txn_id is null
            and pending_transactions.landed_records >= pending_transactions.records_in_transaction
        ) as waiting_transactions,
        sum(snapshot_batches.snapshot_rows) as waiting_snapshot_rows,
        min(
            case
                when
                    pending_transactions.landed_records
                    < pending_transactions.records_in_transaction
                    then pending_transactions.commit_ts
            end
        ) as oldest_incomplete_commit_ts
    from pending_transactions
    left join snapshot_batches
        on
            pending_transactions.source_name = snapshot_batches.source_name
            and pending_transactions.server_transaction_id = snapshot_batches.server_transaction_id
    group by pending_transactions.source_name
),

applied_counts as (
    select
        released.source_name,
        count(*) as applied_transactions
    from {{ ref('int_spanner__transactions') }} as released
    left anti join snapshot_batches
        on
            released.source_name = snapshot_batches.source_name
            and released.server_transaction_id = snapshot_batches.server_transaction_id
    group by released.source_name
),

streams as (
    select source_name from watermarks
    union
    select source_name from pending_counts
),

final as (
    select
        streams.source_name,
        watermarks.last_landing_run,
        open_partitions.lagging_partition_token,
        cast(coalesce(watermarks.open_partitions, 0) as int) as open_partitions,
        cast(coalesce(watermarks.finished_partitions, 0) as int) as finished_partitions,
        cast(coalesce(applied_counts.applied_transactions, 0) as int)
            as applied_transactions,
        cast(coalesce(pending_counts.incomplete_transactions, 0) as int)
            as incomplete_transactions,
        cast(coalesce(pending_counts.waiting_transactions, 0) as int)
            as waiting_transactions,
        cast(coalesce(pending_counts.waiting_snapshot_rows, 0) as bigint)
            as waiting_snapshot_rows,
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
    from streams
    left join watermarks
        on streams.source_name = watermarks.source_name
    left join open_partitions
        on streams.source_name = open_partitions.source_name
    left join applied_counts
        on streams.source_name = applied_counts.source_name
    left join pending_counts
        on streams.source_name = pending_counts.source_name
)

select * from final
