{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['as_of_landing_run'],
        on_schema_change='append_new_columns',
        post_hook=[
            "{{ uncache_view('int_debezium__pending_transactions__candidates') }}",
            "{{ drop_partitions_before_newest(this, 'as_of_landing_run') }}",
        ],
    )
}}

{#- Transactions of servers that send transaction metadata that are not released after the
    newest landing run: their END, or some event it counts, has not landed. They wait, whatever
    their age, and are never applied in part; one is overdue once a transaction of its server
    that committed after it has been released: the connector sends transactions in commit
    order, so what it still misses was lost upstream (docs/sources/debezium.md,
    "Transactions"). cdc_source_freshness counts them. The set after a run is the set after the
    run before it and the transactions with lines landed since, less those now complete, so a
    run reads what changed, not every transaction. Each run writes its set as a partition, with
    a row per server that has sent transaction metadata (no transaction: a server with nothing
    pending still shows, with its newest release) and one that names no server (an empty set
    still says which run it reflects); older partitions are dropped. A pending row keeps what
    has landed of its transaction (its events' arrivals, its END), so that the next run reads
    the lines landed since, not those since the transaction began. -#}
{%- set newest_run = max_processed(ref('int_debezium__events'), 'landing_run') %}
{#- A set written before it kept what had landed of each transaction is rebuilt whole. -#}
{%- set carries_state = is_incremental() and relation_has_column(this, 'arrived_events') %}
{%- set processed_through = -1 %}
{%- set candidates = ref('int_debezium__transactions_seen') %}
{%- set still_pending = none %}
{%- set candidates_hint = '' %}
{%- if carries_state %}
    {%- set processed_through = max_processed(this, 'as_of_landing_run') %}
    {%- set still_pending = '(select * from ' ~ this ~ ' where as_of_landing_run = '
        ~ processed_through ~ ' and transaction_key is not null)' %}
    {%- set candidates = cached_view(
        'int_debezium__pending_transactions__candidates',
        debezium_transaction_candidates(processed_through, still_pending),
    ) %}
    {%- set candidates_hint = broadcast_hint('candidates', count_rows(candidates, 'true')) %}
{%- endif %}

with progress as (
    {{ debezium_transaction_progress(
        candidates, processed_through + 1, candidates_hint, still_pending
    ) }}
),

server_releases as (
    -- Each server's newest released commit: as of the run before, and released since.
    select
        source_name,
        max(committed_at) as newest_released_commit_at
    from {{ ref('int_debezium__transactions') }}
    where landing_run > {{ processed_through }}
    group by source_name
    {%- if carries_state %}
        union all
        select
            source_name,
            newest_released_commit_at
        from {{ this }}
        where
            as_of_landing_run = {{ processed_through }}
            and source_name is not null
            and transaction_key is null
    {%- endif %}
    union all
    select distinct
        source_name,
        cast(null as timestamp) as newest_released_commit_at
    from progress
),

servers as (
    select
        source_name,
        max(newest_released_commit_at) as newest_released_commit_at
    from server_releases
    group by source_name
),

pending_transactions as (
    select
        progress.source_name,
        progress.transaction_key,
        progress.first_landed_at,
        progress.first_landing_run,
        progress.committed_at,
        progress.landed_events,
        progress.event_count,
        progress.missing_events,
        servers.newest_released_commit_at,
        coalesce(progress.committed_at < servers.newest_released_commit_at, false) as is_overdue,
        progress.arrived_events,
        progress.data_collections,
        progress.end_landing_run
    from progress
    inner join servers
        on progress.source_name = servers.source_name
    where progress.completed_run is null
),

pending_set as (
    select * from pending_transactions
    union all
    select
        source_name,
        null as transaction_key,
        null as first_landed_at,
        null as first_landing_run,
        null as committed_at,
        null as landed_events,
        null as event_count,
        null as missing_events,
        newest_released_commit_at,
        null as is_overdue,
        null as arrived_events,
        null as data_collections,
        null as end_landing_run
    from servers
    union all
    select
        null as source_name,
        null as transaction_key,
        null as first_landed_at,
        null as first_landing_run,
        null as committed_at,
        null as landed_events,
        null as event_count,
        null as missing_events,
        null as newest_released_commit_at,
        null as is_overdue,
        null as arrived_events,
        null as data_collections,
        null as end_landing_run
),

final as (
    select
        *,
        cast({{ newest_run }} as bigint) as as_of_landing_run
    from pending_set
)

select * from final
