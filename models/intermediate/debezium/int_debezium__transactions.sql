{{
    config(
        post_hook=[
            "{{ uncache_view('int_debezium__transactions__candidates') }}",
            "{{ row_rules_constraint(
                'debezium_releases_name_their_transaction',
                not_null=['transaction_key'],
            ) }}",
        ],
    )
}}

{#- Transactions of servers that send transaction metadata, released to the change log, each
    once, labelled with the landing run after which its END (the first to land) and every event
    it counts, per data collection, had landed. The run is derived from what each run landed,
    not from when dbt ran, so incremental runs and a full refresh label every release alike. An
    incremental run decides about the transactions with a line landed since its last release
    only, and reads their events from where their lines start. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
{%- set candidates = ref('int_debezium__transactions_seen') %}
{%- set from_run = 0 %}
{%- set candidates_hint = '' %}
{%- if is_incremental() %}
    {%- set candidates = cached_view(
        'int_debezium__transactions__candidates',
        debezium_transaction_candidates(processed_through),
    ) %}
    {%- set first_runs = distinct_values(candidates, 'first_landing_run', 'true') %}
    {%- set from_run = first_runs | min if first_runs else processed_through + 1 %}
    {%- set candidates_hint = broadcast_hint('candidates', count_rows(candidates, 'true')) %}
{%- endif %}

with progress as (
    {{ debezium_transaction_progress(candidates, from_run, candidates_hint) }}
),

final as (
    select
        source_name,
        transaction_key,
        first_landing_run,
        committed_at,
        landed_events,
        completed_run as landing_run
    from progress
    where completed_run > {{ processed_through }}
)

select * from final
