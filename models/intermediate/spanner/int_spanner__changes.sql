{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- The mods of newly released transactions (int_spanner__transactions) in change-log shape.
    They take the releasing run as their landing run: that is when they become changes. An
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

final as (
    select
        released_mods.source_name,
        released_mods.file_path,
        released_mods.line_number,
        {#- An incremental table keeps the column order it was built with: row_image last. #}
        {%- for field in change_fields().split(',') if field != 'row_image' %}
            released_mods.{{ field }},
        {%- endfor %}
        released_mods.error,
        released_mods.landed_at,
        released_mods.release_run as landing_run,
        released_mods.row_image
    from released_mods
)

select * from final
