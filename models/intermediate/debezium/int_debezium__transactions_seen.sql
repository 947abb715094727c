{{
    config(
        post_hook="{{ row_rules_constraint(
            'seen_transactions_name_their_server_and_key',
            not_null=['source_name', 'transaction_key'],
        ) }}",
    )
}}

{#- Each transaction of a server once, with the landing run and time of its first line (a change
    event, its BEGIN or its END): the models that count a transaction's events read the runs
    from there on only, and a transaction that waits is as old as this. -#}
{%- set processed_through = landing_runs_processed('first_landing_run') %}

with new_transactions as (
    select
        source_name,
        transaction_key,
        min(landing_run) as first_landing_run,
        min(landed_at) as first_landed_at
    from {{ ref('int_debezium__events') }}
    where transaction_key is not null and landing_run > {{ processed_through }}
    group by source_name, transaction_key
),

final as (
    select new_transactions.*
    from
        new_transactions
    {%- if is_incremental() %}
        left anti join {{ this }} as seen
            on
                new_transactions.source_name = seen.source_name
                and new_transactions.transaction_key = seen.transaction_key
    {%- endif %}
)

select * from final
