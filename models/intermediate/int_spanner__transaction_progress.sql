{{ config(materialized='view') }}

{#- How much of each transaction has landed: its records may come from several partitions,
    in several runs, and a record may be delivered twice. -#}
with data_records as (
    select * from {{ ref('int_spanner__records') }}
    where record_kind = 'data_change'
),

final as (
    select
        source_name,
        server_transaction_id,
        min(record_ts) as commit_ts,
        max(records_in_transaction) as records_in_transaction,
        count(distinct record_sequence) as landed_records,
        min(landing_run) as first_landing_run,
        max(landing_run) as last_landing_run
    from data_records
    group by source_name, server_transaction_id
)

select * from final
