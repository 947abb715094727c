{{
    config(
        partition_by=['landing_run'],
        on_schema_change='append_new_columns',
    )
}}

{#- Every slot line decoded. Whether a message lies inside a Stream Start .. Stream Stop block
    decides its layout, and only its place in the slot's log tells; a block never spans two
    slot reads (landing runs). Snapshot files are no part of the slot's log
    (int_pgoutput__snapshot_rows). -#}
{%- set processed_through = landing_runs_processed() %}

with new_lines as (
    select
        *,
        hex(
            substr(try_to_binary(get_json_object(line, '$.data'), 'base64'), 1, 1)
        ) as message_tag
    from {{ ref('stg_pgoutput__lines') }}
    where landing_run > {{ processed_through }} and not {{ is_snapshot_file('pgoutput') }}
),

positioned_lines as (
    select
        *,
        coalesce(
            last(case when message_tag in ('53', '45') then message_tag end, true) over (
                partition by source_name, landing_run
                order by file_path, line_number
                rows between unbounded preceding and 1 preceding
            ) = '53',
            false
        ) as in_stream
    from new_lines
),

decoded_lines as (
    select
        positioned_lines.*,
        pgoutput_message(
            positioned_lines.line, positioned_lines.in_stream, positioned_lines.source_name
        ) as message
    from positioned_lines
),

final as (
    select
        decoded_lines.source_name,
        decoded_lines.file_path,
        decoded_lines.line_number,
        decoded_lines.message.kind,
        decoded_lines.message.lsn,
        decoded_lines.message.txn_xid,
        decoded_lines.message.sub_xid,
        decoded_lines.message.first_segment,
        decoded_lines.message.commit_lsn,
        decoded_lines.message.gid,
        decoded_lines.message.relation_oid,
        decoded_lines.message.relation_json,
        decoded_lines.message.column_types,
        decoded_lines.message.old_kind,
        decoded_lines.message.old_tuple_json,
        decoded_lines.message.new_tuple_json,
        decoded_lines.message.truncate_oids,
        decoded_lines.landed_at,
        decoded_lines.landing_run,
        struct(
            decoded_lines.landing_run, decoded_lines.file_path, decoded_lines.line_number
        ) as log_position,
        timestamp_micros(decoded_lines.message.commit_ts) as commit_ts,
        coalesce(decoded_lines.load_error, decoded_lines.message.error) as error,
        case
            when
                decoded_lines.load_error is not null
                or decoded_lines.message.error is not null
                then decoded_lines.line
        end as raw_line
    from decoded_lines
)

select * from final
