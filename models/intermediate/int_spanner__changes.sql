{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        partition_by=['landing_run'],
    )
}}

{#- The mods of newly released transactions (int_spanner__transactions) in change-log shape.
    They take the releasing run as their landing run: that is when they become changes. A
    partial image also names the table's other columns with no value, to be completed from the
    key's earlier changes. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
{%- set first_runs = distinct_values(
    ref('int_spanner__transactions'), 'first_landing_run', 'landing_run > ' ~ processed_through
) if is_incremental() else [] %}

with new_transactions as (
    select * from {{ ref('int_spanner__transactions') }}
    where landing_run > {{ processed_through }}
),

released_mods as (
    select
        records.*,
        new_transactions.landing_run as release_run
    from {{ ref('int_spanner__records') }} as records
    inner join new_transactions
        on
            records.source_name = new_transactions.source_name
            and records.server_transaction_id = new_transactions.server_transaction_id
    where
        records.record_kind = 'data_change'
        and records.op is not null
        and records.landing_run >= {{ first_runs | min if first_runs else 0 }}
),

table_columns as (
    select
        source_name,
        source_table,
        collect_set(column_name) as column_names
    from {{ ref('int_spanner__table_columns') }}
    group by source_name, source_table
),

final as (
    select
        released_mods.source_name,
        released_mods.file_path,
        released_mods.line_number,
        released_mods.source_table,
        released_mods.key_json,
        released_mods.op,
        released_mods.is_full_image,
        released_mods.is_backfill,
        released_mods.order_ts,
        released_mods.sort_pos,
        released_mods.committed_at,
        released_mods.txn_id,
        released_mods.event_id,
        released_mods.error,
        released_mods.landed_at,
        released_mods.release_run as landing_run,
        case
            when released_mods.is_full_image then released_mods.row_image
            else map_from_entries(
                transform(
                    array_union(map_keys(released_mods.row_image), table_columns.column_names),
                    column_name -> struct(
                        column_name, try_element_at(released_mods.row_image, column_name)
                    )
                )
            )
        end as row_image
    from released_mods
    left join table_columns
        on
            released_mods.source_name = table_columns.source_name
            and released_mods.source_table = table_columns.source_table
)

select * from final
