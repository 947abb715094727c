{{
    config(
        materialized='incremental',
        incremental_strategy='append',
    )
}}

{#- Transactions released to the change log, each once, in the run that released it: all its
    records have landed and its commit timestamp is at or below the stream's low watermark.
    Both only grow, so a transaction not released yet waits for a later run. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with transaction_progress as (
    select * from {{ ref('int_spanner__transaction_progress') }}
),

watermarks as (
    select * from {{ ref('int_spanner__watermarks') }}
),

releasable as (
    select transaction_progress.*
    from transaction_progress
    inner join watermarks
        on transaction_progress.source_name = watermarks.source_name
    where
        transaction_progress.landed_records >= transaction_progress.records_in_transaction
        and transaction_progress.commit_ts <= watermarks.low_watermark_ts
),

new_releases as (
    select releasable.*
    from
        releasable
    {%- if is_incremental() %}
        left anti join {{ this }} as released
            on
                releasable.source_name = released.source_name
                and releasable.server_transaction_id = released.server_transaction_id
    {%- endif %}
),

releasing_run as (
    select max(last_landing_run) as landing_run from watermarks
),

final as (
    select
        new_releases.source_name,
        new_releases.server_transaction_id,
        new_releases.commit_ts,
        new_releases.records_in_transaction,
        new_releases.first_landing_run,
        releasing_run.landing_run
    from new_releases
    cross join releasing_run
)

select * from final
