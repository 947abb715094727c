{{ config(severity='warn') }}

-- Debezium: a transaction that still waits for its END or events although a transaction of its
-- server committed after it has been applied. The connector sends transactions in commit order,
-- so what it misses was lost or lags upstream; it waits, never applied in part, and this warns
-- (docs/sources/debezium.md, "Transactions").
with pending_transactions as (
    select * from {{ ref('int_debezium__pending_transactions') }}
),

final as (
    select
        pending.source_name,
        pending.transaction_key,
        pending.first_landed_at,
        pending.committed_at,
        pending.landed_events,
        pending.event_count,
        pending.missing_events,
        pending.newest_released_commit_at
    from pending_transactions as pending
    where
        pending.as_of_landing_run = (
            select max(newest.as_of_landing_run) from pending_transactions as newest
        )
        and pending.is_overdue
)

select * from final
