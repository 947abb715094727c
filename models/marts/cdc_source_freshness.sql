{{ config(materialized='view') }}

{#- For operators: how far behind each stream, server or slot is, computed when read (a view,
    so the ages are as of the query). A source whose files stopped arriving shows an old
    last_landed_at; one whose changes wait (Spanner below its watermark, pgoutput transactions
    streamed but not committed, Debezium transactions whose END or events have not all landed)
    shows them as pending. -#}
{%- set snapshot_families = [] %}
{%- for family in source_families('snapshots').split(',') %}
    {%- do snapshot_families.append("'" ~ family ~ "'") %}
{%- endfor %}
with landed_files as (
    select * from {{ source('cdc_raw', 'landed_files') }}
),

debezium_pending_transactions as (
    select * from {{ ref('int_debezium__pending_transactions') }}
),

newest_landing_run as (
    select max(landing_run) as landing_run from landed_files
),

landings as (
    select
        family as source_system,
        source_name,
        max(landed_at) as last_landed_at,
        max(landing_run) as last_landing_run,
        max_by(file_path, struct(landing_run, file_path)) as last_landed_file,
        count(distinct file_path) as files_landed
    from landed_files
    group by family, source_name
),

applied_changes as (
    -- A row of a snapshot file is no commit of the source's log: its time is the read
    -- timestamp, or pgoutput's epoch ("since before the log began"), so a source with only its
    -- snapshot applied has applied no change of its log yet (`source_families('snapshots')`).
    select
        source_system,
        source_name,
        max(committed_at) as newest_commit_applied
    from {{ ref('int_cdc__change_log') }}
    where
        op != 'snapshot'
        or not {{ in_values('source_system', snapshot_families) }}
    group by source_system, source_name
),

quarantined as (
    select
        quarantine.source_system,
        quarantine.source_name,
        count(*) as quarantined_in_last_run
    from {{ ref('cdc_quarantine') }} as quarantine
    inner join newest_landing_run
        on quarantine.landing_run = newest_landing_run.landing_run
    group by quarantine.source_system, quarantine.source_name
),

-- A pgoutput transaction is pending while its newest start (Begin, Begin Prepare, the first
-- Stream Start) comes after its newest end (a commit, a rollback of the prepared transaction, a
-- Stream Abort of the whole transaction): streamed or prepared, not yet decided.
pgoutput_transaction_bounds as (
    select
        source_name,
        txn_xid,
        max(
            case
                when
                    kind in ('begin', 'begin_prepare')
                    or (kind = 'stream_start' and first_segment)
                    then log_position
            end
        ) as started_at,
        max(
            case
                when
                    kind in ('commit', 'stream_commit', 'commit_prepared', 'rollback_prepared')
                    or (kind = 'stream_abort' and sub_xid = txn_xid)
                    then log_position
            end
        ) as ended_at
    from {{ ref('int_pgoutput__messages') }}
    where error is null
    group by source_name, txn_xid
),

pgoutput_pending as (
    select
        'pgoutput' as source_system,
        source_name,
        cast(null as timestamp) as low_watermark,
        count_if(started_at > ended_at or (started_at is not null and ended_at is null))
            as pending_transactions,
        cast(null as bigint) as overdue_transactions,
        cast(null as timestamp) as oldest_pending_landed_at
    from pgoutput_transaction_bounds
    group by source_name
),

spanner_pending as (
    select
        'spanner' as source_system,
        source_name,
        low_watermark,
        incomplete_transactions + waiting_transactions as pending_transactions,
        cast(null as bigint) as overdue_transactions,
        cast(null as timestamp) as oldest_pending_landed_at
    from {{ ref('cdc_spanner_streams') }}
),

-- A Debezium transaction is pending while its END or an event it counts has not landed; it is
-- overdue once a transaction of its server committed after it has been released. A server that
-- has never sent transaction metadata has no row.
debezium_pending as (
    -- The newest set: the view may be read after a run has written a newer one.
    select
        'debezium' as source_system,
        pending_set.source_name,
        cast(null as timestamp) as low_watermark,
        count(pending_set.transaction_key) as pending_transactions,
        count_if(pending_set.is_overdue) as overdue_transactions,
        min(pending_set.first_landed_at) as oldest_pending_landed_at
    from debezium_pending_transactions as pending_set
    where
        pending_set.as_of_landing_run = (
            select max(newest_set.as_of_landing_run)
            from debezium_pending_transactions as newest_set
        )
        and pending_set.source_name is not null
    group by pending_set.source_name
),

-- A family whose changes wait for later lines counts them in a CTE `<family>_pending`
-- (`source_families`).
pending as (
    {%- for family in source_families('pending').split(',') %}
        select * from {{ family }}_pending
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
),

final as (
    select
        landings.source_system,
        landings.source_name,
        landings.last_landed_at,
        landings.last_landing_run,
        landings.last_landed_file,
        landings.files_landed,
        applied_changes.newest_commit_applied,
        pending.low_watermark as spanner_low_watermark,
        pending.pending_transactions,
        pending.overdue_transactions,
        pending.oldest_pending_landed_at,
        coalesce(quarantined.quarantined_in_last_run, 0) as quarantined_in_last_run,
        unix_timestamp(current_timestamp()) - unix_timestamp(landings.last_landed_at)
            as seconds_since_landing,
        unix_timestamp(current_timestamp())
        - unix_timestamp(applied_changes.newest_commit_applied) as commit_lag_seconds
    from landings
    left join applied_changes
        on
            landings.source_system = applied_changes.source_system
            and landings.source_name = applied_changes.source_name
    left join quarantined
        on
            landings.source_system = quarantined.source_system
            and landings.source_name = quarantined.source_name
    left join pending
        on
            landings.source_system = pending.source_system
            and landings.source_name = pending.source_name
)

select * from final
