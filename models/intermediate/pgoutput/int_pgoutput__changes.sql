{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- The row changes of newly committed transactions: the log's content between a transaction's
    last restart and its commit, without subtransactions aborted in between, typed by the
    Relation message in force at each change (it may have landed in an earlier run). They take
    the commit's landing run: that is when they become changes. New snapshot rows are changes as
    they land, placed at their slot's consistent point (int_pgoutput__snapshot_rows). -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with messages as (
    select * from {{ ref('int_pgoutput__messages') }}
    where error is null
),

new_transactions as (
    select * from {{ ref('int_pgoutput__transactions') }}
    where landing_run > {{ processed_through }}
),

messages_since_restarts as (
    -- A transaction's content lies after its last restart, and a log position starts with
    -- its landing run: the runs before the new transactions' earliest restart are not read.
    select * from messages
    where
        landing_run >= (
            select min(coalesce(restart_position.landing_run, -1)) from new_transactions
        )
),

transaction_messages as (
    select
        messages_since_restarts.*,
        new_transactions.commit_lsn as transaction_commit_lsn,
        new_transactions.commit_ts as transaction_commit_ts,
        new_transactions.landing_run as commit_landing_run
    from messages_since_restarts
    inner join new_transactions
        on
            messages_since_restarts.source_name = new_transactions.source_name
            and messages_since_restarts.txn_xid = new_transactions.txn_xid
            and messages_since_restarts.log_position < new_transactions.commit_position
            and (
                new_transactions.restart_position is null
                or messages_since_restarts.log_position > new_transactions.restart_position
            )
),

aborted_subtransactions as (
    select distinct
        source_name,
        txn_xid,
        sub_xid
    from transaction_messages
    where kind = 'stream_abort' and sub_xid != txn_xid
),

row_messages as (
    select transaction_messages.*
    from transaction_messages
    left anti join aborted_subtransactions
        on
            transaction_messages.source_name = aborted_subtransactions.source_name
            and transaction_messages.txn_xid = aborted_subtransactions.txn_xid
            and transaction_messages.sub_xid = aborted_subtransactions.sub_xid
    where transaction_messages.kind in ('insert', 'update', 'delete', 'truncate')
),

relation_changes as (
    select
        row_messages.*,
        coalesce(row_messages.relation_oid, truncated.relation_oid) as changed_relation_oid
    from row_messages
        lateral view outer explode(row_messages.truncate_oids) truncated as relation_oid
),

relation_timeline as (
    -- Relation messages and the row changes that need one, in log order per relation. A
    -- running "latest definition" over it costs a sort; a join of every change with every
    -- earlier Relation message (then keeping the latest) grows with their product.
    select
        source_name,
        relation_oid,
        log_position,
        relation_json,
        true as is_definition
    from messages
    where kind = 'relation'
    union all
    select distinct
        source_name,
        changed_relation_oid as relation_oid,
        log_position,
        cast(null as string) as relation_json,
        false as is_definition
    from relation_changes
),

definitions_in_force as (
    select
        source_name,
        relation_oid,
        log_position,
        is_definition,
        last(relation_json, true) over (
            partition by source_name, relation_oid
            order by log_position
            rows between unbounded preceding and current row
        ) as relation_definition
    from relation_timeline
),

described_changes as (
    select
        relation_changes.*,
        definitions_in_force.relation_definition
    from relation_changes
    left join definitions_in_force
        on
            relation_changes.source_name = definitions_in_force.source_name
            and relation_changes.changed_relation_oid = definitions_in_force.relation_oid
            and relation_changes.log_position = definitions_in_force.log_position
            and not definitions_in_force.is_definition
),

typed_changes as (
    select
        described_changes.*,
        explode(
            pgoutput_changes(
                described_changes.relation_definition,
                described_changes.kind,
                described_changes.old_kind,
                described_changes.old_tuple_json,
                described_changes.new_tuple_json,
                described_changes.source_name
            )
        ) as typed_change
    from described_changes
),

transaction_changes as (
    select
        typed_changes.source_name,
        typed_changes.file_path,
        typed_changes.line_number,
        typed_changes.typed_change.source_table,
        typed_changes.typed_change.key_json,
        typed_changes.typed_change.op,
        typed_changes.typed_change.row_image,
        typed_changes.typed_change.error,
        typed_changes.landed_at,
        typed_changes.transaction_commit_ts as committed_at,
        typed_changes.commit_landing_run as landing_run,
        false as is_backfill,
        cast(null as bigint) as order_ts,
        concat_ws(
            '.',
            {{ position_uint('typed_changes.transaction_commit_lsn', 20) }},
            {{ position_uint('typed_changes.lsn', 20) }}
        ) as sort_pos,
        concat('xid:', typed_changes.txn_xid) as txn_id,
        concat_ws(
            ':',
            typed_changes.transaction_commit_lsn,
            typed_changes.lsn,
            typed_changes.typed_change.op
        ) as event_id,
        case
            when typed_changes.typed_change.error is not null
                then concat_ws(
                    ' ',
                    typed_changes.kind,
                    'message at lsn',
                    typed_changes.lsn,
                    'of xid',
                    typed_changes.txn_xid
                )
        end as raw_line
    from typed_changes
),

snapshot_changes as (
    -- In transaction_changes' column order: a union matches columns by position.
    select
        source_name,
        file_path,
        line_number,
        source_table,
        key_json,
        op,
        row_image,
        error,
        landed_at,
        committed_at,
        landing_run,
        is_backfill,
        order_ts,
        sort_pos,
        txn_id,
        event_id,
        raw_line
    from {{ ref('int_pgoutput__snapshot_rows') }}
    where landing_run > {{ processed_through }} and error is null
),

final as (
    select * from transaction_changes
    union all
    select * from snapshot_changes
)

select * from final
