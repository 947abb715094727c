-- Spanner: no applied change lies above its stream's low watermark, and every applied change
-- belongs to a transaction whose records have all landed.
with applied_changes as (
    select * from {{ ref('int_spanner__changes') }}
),

watermarks as (
    select * from {{ ref('int_spanner__watermarks') }}
),

transaction_progress as (
    select * from {{ ref('int_spanner__transaction_progress') }}
),

final as (
    select
        applied_changes.source_name,
        applied_changes.txn_id,
        applied_changes.committed_at,
        transaction_progress.landed_records,
        transaction_progress.records_in_transaction,
        timestamp_micros(watermarks.low_watermark_ts) as low_watermark
    from applied_changes
    left join watermarks
        on applied_changes.source_name = watermarks.source_name
    left join transaction_progress
        on
            applied_changes.source_name = transaction_progress.source_name
            and applied_changes.txn_id = transaction_progress.server_transaction_id
    where
        watermarks.low_watermark_ts is null
        or unix_micros(applied_changes.committed_at) > watermarks.low_watermark_ts
        or transaction_progress.landed_records is null
        or transaction_progress.landed_records < transaction_progress.records_in_transaction
)

select * from final
