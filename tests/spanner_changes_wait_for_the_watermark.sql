-- Spanner: no applied change lies above its stream's low watermark, and every applied change
-- belongs to a transaction whose records have all landed. Under `cdcw run`, only the changes
-- its build applied.
with applied_changes as (
    select * from {{ ref('int_spanner__changes') }}
    where {{ written_by_this_build('landing_run') }}
),

watermarks as (
    select * from {{ ref('int_spanner__watermarks') }}
),

-- Counted here rather than read from int_spanner__transaction_progress: Spark does not push
-- the semi join through that view's aggregates, so it would count every transaction.
transaction_progress as (
    select
        records.source_name,
        records.server_transaction_id,
        count(distinct records.record_sequence) as landed_records,
        max(records.records_in_transaction) as records_in_transaction
    from {{ ref('int_spanner__records') }} as records
    left semi join applied_changes
        on
            records.source_name = applied_changes.source_name
            and records.server_transaction_id = applied_changes.txn_id
    where records.record_kind = 'data_change'
    group by records.source_name, records.server_transaction_id
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
