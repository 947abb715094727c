{#- A Spanner snapshot row is the row as it stood at its read timestamp, so it waits for its
    stream's low watermark exactly as a transaction committed then whose records have all landed
    (CONTRACT §2 "Spanner consistency"; docs/decisions/004). The rows of one read timestamp that
    one landing run brought are one batch: int_spanner__transaction_progress counts it as such
    a transaction, complete in that run, and int_spanner__transactions releases it. A few rows
    per run, so the release never rescans the snapshot rows. -#}
{%- set processed_through = landing_runs_processed() %}

with new_rows as (
    select * from {{ ref('int_spanner__snapshot_rows') }}
    where landing_run > {{ processed_through }} and error is null
),

final as (
    select
        source_name,
        txn_id,
        landing_run,
        -- The snapshot's own transaction (snapshot:<read timestamp>) and the run.
        concat(txn_id, ':', landing_run) as server_transaction_id,
        unix_micros(min(committed_at)) as commit_ts,
        count(*) as snapshot_rows
    from new_rows
    group by source_name, txn_id, landing_run
)

select * from final
