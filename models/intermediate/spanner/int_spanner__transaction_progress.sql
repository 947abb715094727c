{{ config(materialized='view') }}

{#- How much of each transaction has landed: its records may come from several partitions,
    in several runs, and a record may be delivered twice. completed_run is the landing run in
    which its last missing record arrived. A snapshot batch (int_spanner__snapshot_batches) is a
    transaction at its read timestamp, complete in the run that landed it. -#}
with record_arrivals as (
    select
        source_name,
        server_transaction_id,
        record_sequence,
        min(record_ts) as commit_ts,
        max(records_in_transaction) as records_in_transaction,
        min(landing_run) as arrival_run,
        max(landing_run) as last_delivery_run
    from {{ ref('int_spanner__records') }}
    where record_kind = 'data_change'
    group by source_name, server_transaction_id, record_sequence
),

ordered_arrivals as (
    -- A transaction completes in the run that brought its records_in_transaction-th record.
    -- A window, not a sorted collect_list: deterministic aggregates let Spark push a reader's
    -- broadcast semi join on the transaction into this view.
    select
        *,
        row_number() over (
            partition by source_name, server_transaction_id
            order by arrival_run, record_sequence
        ) as arrival_order,
        max(records_in_transaction) over (
            partition by source_name, server_transaction_id
        ) as transaction_records
    from record_arrivals
),

transaction_arrivals as (
    select
        source_name,
        server_transaction_id,
        min(commit_ts) as commit_ts,
        max(records_in_transaction) as records_in_transaction,
        count(*) as landed_records,
        min(arrival_run) as first_landing_run,
        max(last_delivery_run) as last_landing_run,
        max(
            case when arrival_order = transaction_records then arrival_run end
        ) as completed_run
    from ordered_arrivals
    group by source_name, server_transaction_id
),

snapshot_batches as (
    select
        source_name,
        server_transaction_id,
        commit_ts,
        snapshot_rows as records_in_transaction,
        snapshot_rows as landed_records,
        landing_run as first_landing_run,
        landing_run as last_landing_run,
        landing_run as completed_run
    from {{ ref('int_spanner__snapshot_batches') }}
),

final as (
    select * from transaction_arrivals
    union all
    select * from snapshot_batches
)

select * from final
