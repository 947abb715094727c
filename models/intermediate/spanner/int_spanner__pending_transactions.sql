{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['as_of_landing_run'],
        post_hook=[
            "{{ uncache_view('int_spanner__pending_transactions__candidates') }}",
            "{{ drop_partitions_before_newest(this, 'as_of_landing_run') }}",
        ],
    )
}}

{#- Transactions not released after the newest landing run: records still missing, or committed
    above the low watermark; snapshot batches above it too. cdc_spanner_streams counts them. The
    set after a run is the set after the run before it and the transactions with records (or the
    batches) landed since, less those released, so a run reads what changed, not every
    transaction. Each run writes its set as a partition,
    with one row that names no transaction, so that an empty set still says which run it
    reflects; older partitions are dropped. -#}
{%- set newest_run = [
    max_processed(ref('int_spanner__records'), 'landing_run'),
    max_processed(ref('int_spanner__snapshot_batches'), 'landing_run'),
] | max %}
{#- What may be pending after an incremental run: what was pending after the run before it, and
    the transactions with a record (or the snapshot batches) landed since. Everything else was
    released by then, or has no record. -#}
{%- set processed_through = max_processed(this, 'as_of_landing_run') if is_incremental() else -1 %}
{%- set pending_candidates_query -%}
    select
        source_name,
        server_transaction_id
    from {{ ref('int_spanner__records') }}
    where record_kind = 'data_change' and landing_run > {{ processed_through }}
    union
    select
        source_name,
        server_transaction_id
    from {{ ref('int_spanner__snapshot_batches') }}
    where landing_run > {{ processed_through }}
    union
    select
        source_name,
        server_transaction_id
    from {{ this }}
    where as_of_landing_run = {{ processed_through }}
{%- endset %}
{%- set candidates_hint = '' %}
{%- if is_incremental() %}
    {%- set candidates = cached_view(
        'int_spanner__pending_transactions__candidates', pending_candidates_query
    ) %}
    {%- set candidates_hint = broadcast_hint('candidates', count_rows(candidates, 'true')) %}
{%- endif %}

with transaction_progress as (
    select * from {{ ref('int_spanner__transaction_progress') }}
),

released_transactions as (
    select * from {{ ref('int_spanner__transactions') }}
),

candidate_progress as (
    -- A full refresh considers every transaction.
    select {{ candidates_hint }} transaction_progress.*
    from
        transaction_progress
    {%- if is_incremental() %}
        left semi join {{ candidates }} as candidates
            on
                transaction_progress.source_name = candidates.source_name
                and transaction_progress.server_transaction_id
                = candidates.server_transaction_id
    {%- endif %}
),

released_candidates as (
    select {{ candidates_hint }}
        released_transactions.source_name,
        released_transactions.server_transaction_id
    from
        released_transactions
    {%- if is_incremental() %}
        left semi join {{ candidates }} as candidates
            on
                released_transactions.source_name = candidates.source_name
                and released_transactions.server_transaction_id
                = candidates.server_transaction_id
    {%- endif %}
),

pending_transactions as (
    select
        candidate_progress.source_name,
        candidate_progress.server_transaction_id,
        candidate_progress.commit_ts,
        candidate_progress.records_in_transaction,
        candidate_progress.landed_records
    from candidate_progress
    left anti join released_candidates
        on
            candidate_progress.source_name = released_candidates.source_name
            and candidate_progress.server_transaction_id
            = released_candidates.server_transaction_id
),

pending_set as (
    select * from pending_transactions
    union all
    select
        null as source_name,
        null as server_transaction_id,
        null as commit_ts,
        null as records_in_transaction,
        null as landed_records
),

final as (
    select
        *,
        cast({{ newest_run }} as int) as as_of_landing_run
    from pending_set
)

select * from final
