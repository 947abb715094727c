{{
    config(
        post_hook=[
            "{{ uncache_view('int_spanner__transactions__candidates') }}",
            "{{ row_rules_constraint(
                'spanner_releases_name_their_transaction',
                not_null=['server_transaction_id'],
            ) }}",
        ],
    )
}}

{#- Transactions released to the change log, each once, with the landing run that released
    it: the first run after which all its records had landed and the stream's low watermark
    had reached its commit timestamp; a snapshot batch likewise, at its read timestamp. The run is derived from what each run had landed, not
    from when dbt ran, so incremental runs and a full refresh label every release alike.
    An incremental run counts the records of the transactions it may release only: those with
    a record landed since, and those left waiting above the watermark. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
{#- The transactions an incremental run may release: those with a record (or a snapshot batch)
    landed after `processed_through`, and those whose commit lies above the low watermark as of
    that run (one not released by then lay above the watermark at every run since it completed,
    that one included). A broadcast semi join on this set reaches the records scan under
    int_spanner__transaction_progress's aggregates. -#}
{%- set release_candidates_query -%}
    select distinct
        records.source_name,
        records.server_transaction_id
    from (
        select source_name, server_transaction_id, landing_run, record_ts
        from {{ ref('int_spanner__records') }}
        where record_kind = 'data_change'
        union all
        select source_name, server_transaction_id, landing_run, commit_ts as record_ts
        from {{ ref('int_spanner__snapshot_batches') }}
    ) as records
    left join (
        {{ spanner_watermarks_as_of_runs(
            '(select distinct source_name, ' ~ processed_through ~ ' as landing_run from '
            ~ ref('int_spanner__partition_reports') ~ ' where landing_run <= '
            ~ processed_through ~ ')'
        ) }}
    ) as watermarks_then
        on records.source_name = watermarks_then.source_name
    where
        records.landing_run > {{ processed_through }}
        or watermarks_then.low_watermark_ts is null
        or records.record_ts > watermarks_then.low_watermark_ts
{%- endset %}
{%- set candidates_hint = '' %}
{%- if is_incremental() %}
    {%- set candidates = cached_view(
        'int_spanner__transactions__candidates', release_candidates_query
    ) %}
    {%- set candidates_hint = broadcast_hint('candidates', count_rows(candidates, 'true')) %}
{%- endif %}

with new_runs as (
    -- A run that landed only snapshot rows of a stream may release them too.
    select
        source_name,
        landing_run
    from {{ ref('int_spanner__partition_reports') }}
    where landing_run > {{ processed_through }}
    union
    select
        source_name,
        landing_run
    from {{ ref('int_spanner__snapshot_batches') }}
    where landing_run > {{ processed_through }}
),

watermarks_as_of_run as (
    {{ spanner_watermarks_as_of_runs('new_runs') }}
),

transaction_progress as (
    select * from {{ ref('int_spanner__transaction_progress') }}
),

considered_transactions as (
    -- No completed_run filter here: a filter over the view's aggregates would keep Spark from
    -- pushing the semi join into it. Incomplete transactions drop out at the join on
    -- completed_run in final.
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

{%- if is_incremental() %}

    released_candidates as (
        -- Only the candidates' releases: the anti join below then does not shuffle all of them.
        select {{ candidates_hint }}
            released.source_name,
            released.server_transaction_id
        from {{ this }} as released
        left semi join {{ candidates }} as candidates
            on
                released.source_name = candidates.source_name
                and released.server_transaction_id = candidates.server_transaction_id
    ),
{%- endif %}

unreleased_transactions as (
    select considered_transactions.*
    from
        considered_transactions
    {%- if is_incremental() %}
    left anti join released_candidates
        on
            considered_transactions.source_name = released_candidates.source_name
            and considered_transactions.server_transaction_id
            = released_candidates.server_transaction_id
    {%- endif %}
),

final as (
    select
        unreleased_transactions.source_name,
        unreleased_transactions.server_transaction_id,
        unreleased_transactions.commit_ts,
        unreleased_transactions.records_in_transaction,
        unreleased_transactions.first_landing_run,
        min(watermarks_as_of_run.landing_run) as landing_run
    from unreleased_transactions
    inner join watermarks_as_of_run
        on
            unreleased_transactions.source_name = watermarks_as_of_run.source_name
            and unreleased_transactions.completed_run <= watermarks_as_of_run.landing_run
            and unreleased_transactions.commit_ts <= watermarks_as_of_run.low_watermark_ts
    group by
        unreleased_transactions.source_name,
        unreleased_transactions.server_transaction_id,
        unreleased_transactions.commit_ts,
        unreleased_transactions.records_in_transaction,
        unreleased_transactions.first_landing_run
)

select * from final
