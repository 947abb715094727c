{{ config(materialized='view') }}

{#- How much of each transaction has landed: its records may come from several partitions,
    in several runs, and a record may be delivered twice. completed_run is the landing run in
    which its last missing record arrived. -#}
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

transactions as (
    select
        source_name,
        server_transaction_id,
        min(commit_ts) as commit_ts,
        max(records_in_transaction) as records_in_transaction,
        count(*) as landed_records,
        min(arrival_run) as first_landing_run,
        max(last_delivery_run) as last_landing_run,
        array_sort(collect_list(arrival_run)) as arrival_runs
    from record_arrivals
    group by source_name, server_transaction_id
),

final as (
    select
        source_name,
        server_transaction_id,
        commit_ts,
        records_in_transaction,
        landed_records,
        first_landing_run,
        last_landing_run,
        case
            when landed_records >= records_in_transaction
                then element_at(arrival_runs, cast(records_in_transaction as int))
        end as completed_run
    from transactions
)

select * from final
