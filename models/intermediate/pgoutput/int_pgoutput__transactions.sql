{#- Transactions committed in the slot's log (Commit, Stream Commit, Commit Prepared), each once,
    with the log position of its last (re)start: Begin, Begin Prepare or Stream Start with
    first_segment. Its content is what the log holds between the two (docs/sources/pgoutput.md,
    "Transactions"); everything else for that xid is a resend. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with messages as (
    select * from {{ ref('int_pgoutput__messages') }}
    where error is null
),

new_commits as (
    select
        source_name,
        txn_xid,
        commit_lsn,
        commit_ts,
        log_position as commit_position,
        landing_run,
        row_number() over (
            partition by source_name, txn_xid order by log_position
        ) as commit_number
    from messages
    where
        kind in ('commit', 'stream_commit', 'commit_prepared')
        and landing_run > {{ processed_through }}
),

first_commits as (
    select new_commits.*
    from
        new_commits
    {%- if is_incremental() %}
        left anti join {{ this }} as already_committed
            on
                new_commits.source_name = already_committed.source_name
                and new_commits.txn_xid = already_committed.txn_xid
    {%- endif %}
    where new_commits.commit_number = 1
),

restarts as (
    select
        messages.source_name,
        messages.txn_xid,
        messages.log_position
    from messages
    left semi join first_commits
        on
            messages.source_name = first_commits.source_name
            and messages.txn_xid = first_commits.txn_xid
    where
        messages.kind in ('begin', 'begin_prepare')
        or (messages.kind = 'stream_start' and messages.first_segment)
),

final as (
    select
        first_commits.source_name,
        first_commits.txn_xid,
        first_commits.commit_lsn,
        first_commits.commit_ts,
        first_commits.commit_position,
        first_commits.landing_run,
        max(restarts.log_position) as restart_position
    from first_commits
    left join restarts
        on
            first_commits.source_name = restarts.source_name
            and first_commits.txn_xid = restarts.txn_xid
            and first_commits.commit_position > restarts.log_position
    group by
        first_commits.source_name,
        first_commits.txn_xid,
        first_commits.commit_lsn,
        first_commits.commit_ts,
        first_commits.commit_position,
        first_commits.landing_run
)

select * from final
