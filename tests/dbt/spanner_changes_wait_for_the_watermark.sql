-- Spanner: no applied change lies above its stream's low watermark, and every applied change
-- belongs to a transaction whose records have all landed; a snapshot row, at its read timestamp,
-- waits for the watermark alone. Under `cdcw run`, only the changes its build applied.
{%- set applied = written_by_this_build('landing_run') %}
{#- A join hint is what lets Spark push the semi join below the view's aggregates (it does so
    only for a join it can plan as a broadcast), so only these transactions are counted. -#}
{%- set applied_changes_hint = broadcast_hint(
    'applied_changes', count_rows(ref('int_spanner__changes'), applied)
) %}

with applied_changes as (
    select * from {{ ref('int_spanner__changes') }}
    where {{ applied }}
),

watermarks as (
    select * from {{ ref('int_spanner__watermarks') }}
),

transaction_progress as (
    select {{ applied_changes_hint }} progress.*
    from {{ ref('int_spanner__transaction_progress') }} as progress
    left semi join applied_changes
        on
            progress.source_name = applied_changes.source_name
            and progress.server_transaction_id = applied_changes.txn_id
),

final as (
    select
        applied_changes.source_name,
        applied_changes.txn_id,
        applied_changes.op,
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
        or applied_changes.op != 'snapshot' and (
            transaction_progress.landed_records is null
            or transaction_progress.landed_records < transaction_progress.records_in_transaction
        )
)

select * from final
