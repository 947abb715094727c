{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- The mods of newly released transactions (int_spanner__transactions) in change-log shape,
    and the rows of newly released snapshot batches (int_spanner__snapshot_batches). They take
    the releasing run as their landing run: that is when they become changes. An
    image names only the columns its record carries: cdc_history completes it with the table's
    columns as known when it is built, so that a column first seen in a later run counts in
    earlier images too, as a full refresh would count it. -#}
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

released_batches as (
    select
        batches.source_name,
        batches.txn_id,
        batches.landing_run,
        new_transactions.landing_run as release_run
    from {{ ref('int_spanner__snapshot_batches') }} as batches
    inner join new_transactions
        on
            batches.source_name = new_transactions.source_name
            and batches.server_transaction_id = new_transactions.server_transaction_id
),

released_snapshot_rows as (
    select
        snapshot_rows.*,
        released_batches.release_run
    from {{ ref('int_spanner__snapshot_rows') }} as snapshot_rows
    inner join released_batches
        on
            snapshot_rows.source_name = released_batches.source_name
            and snapshot_rows.txn_id = released_batches.txn_id
            and snapshot_rows.landing_run = released_batches.landing_run
    where
        snapshot_rows.error is null
        and snapshot_rows.landing_run >= {{ first_runs | min if first_runs else 0 }}
),

final as (
    -- A union matches columns by position: each branch lists them alike.
    {%- for released in ['released_mods', 'released_snapshot_rows'] %}
        select
            {{ released }}.source_name,
            {{ released }}.file_path,
            {{ released }}.line_number,
            {#- An incremental table keeps the column order it was built with: row_image last. #}
            {%- for field in change_fields().split(',') if field != 'row_image' %}
                {{ released }}.{{ field }},
            {%- endfor %}
            {{ released }}.error,
            {{ released }}.landed_at,
            {{ released }}.release_run as landing_run,
            {{ released }}.row_image
        from {{ released }}
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
)

select * from final
